package appset

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func appObj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// ignoreApplicationDifferences keeps the current value of the fields it
// names (pointers, jq paths, per-app names) when a set updates an
// Application, and leaves out what the current Application lacks.
func TestKeepIgnoredDifferences(t *testing.T) {
	set, err := Load(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: guestbook}
spec:
  generators: [{list: {elements: []}}]
  template: {metadata: {name: x}}
  ignoreApplicationDifferences:
  - jsonPointers: [/spec/source/targetRevision]
  - name: web
    jqPathExpressions: ['.spec.source.helm.values']
  - name: other
    jsonPointers: [/spec/project]
`))
	if err != nil {
		t.Fatal(err)
	}
	gen := func(name string) *unstructured.Unstructured {
		return appObj(t, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: `+name+`, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://git.example/x, path: app, targetRevision: main, helm: {values: "replicas: 1"}}
  destination: {server: https://kubernetes.default.svc, namespace: web}
`)
	}
	current := func(name string) *unstructured.Unstructured {
		return appObj(t, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: `+name+`, namespace: argocd}
spec:
  project: team
  source: {repoURL: https://git.example/x, path: old, targetRevision: v1.2.3, helm: {values: "replicas: 5"}}
  destination: {server: https://kubernetes.default.svc, namespace: web}
`)
	}
	ctx := context.Background()
	out, err := KeepIgnoredDifferences(ctx, &set[0], gen("web"), current("web"))
	if err != nil {
		t.Fatal(err)
	}
	get := func(o *unstructured.Unstructured, path ...string) string {
		v, _, _ := unstructured.NestedString(o.Object, path...)
		return v
	}
	if get(out, "spec", "source", "targetRevision") != "v1.2.3" || get(out, "spec", "source", "helm", "values") != "replicas: 5" {
		t.Errorf("ignored fields overwritten: %v", out.Object["spec"])
	}
	if get(out, "spec", "source", "path") != "app" || get(out, "spec", "project") != "default" {
		t.Errorf("a field no rule (for this app) covers was not updated: %v", out.Object["spec"])
	}
	// The jq rule names web only: another app's values are the set's.
	out, err = KeepIgnoredDifferences(ctx, &set[0], gen("api"), current("api"))
	if err != nil {
		t.Fatal(err)
	}
	if get(out, "spec", "source", "helm", "values") != "replicas: 1" || get(out, "spec", "source", "targetRevision") != "v1.2.3" {
		t.Errorf("per-app rule applied to another app: %v", out.Object["spec"])
	}
	// A field the current Application lacks is left out.
	cur := current("web")
	unstructured.RemoveNestedField(cur.Object, "spec", "source", "targetRevision")
	out, err = KeepIgnoredDifferences(ctx, &set[0], gen("web"), cur)
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedString(out.Object, "spec", "source", "targetRevision"); found {
		t.Error("an ignored field the current Application lacks was written")
	}
	// To create (no current) the generated Application is written whole.
	g := gen("web")
	if out, err := KeepIgnoredDifferences(ctx, &set[0], g, nil); err != nil || out != g {
		t.Errorf("create: %v %v", out, err)
	}
	// A jq expression that fails on this object: a typed error naming
	// the set and the Application.
	bad := set[0]
	bad.Spec.IgnoreApplicationDifferences = []IgnoreDifference{{JQPathExpressions: []string{`.spec.source.path | error("boom")`}}}
	_, err = KeepIgnoredDifferences(ctx, &bad, gen("web"), current("web"))
	var ae *Error
	if !errors.As(err, &ae) || ae.Set != "guestbook" || ae.App != "web" {
		t.Fatalf("want *Error naming the set and app, got %v", err)
	}
}
