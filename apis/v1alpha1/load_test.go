package v1alpha1

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/resource"
)

const guestbook = `# An Argo CD example, unchanged.
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://github.com/argoproj/argocd-example-apps.git
    targetRevision: HEAD
    path: helm-guestbook
    helm:
      releaseName: gb
      valueFiles: [values-prod.yaml]
      parameters:
      - {name: image.tag, value: v2}
      valuesObject:
        replicaCount: 2
  destination:
    server: https://kubernetes.default.svc
    namespace: guestbook
  syncPolicy:
    automated: {prune: true, selfHeal: true}
    syncOptions: [CreateNamespace=true, PruneLast=true]
    retry:
      limit: 5
      backoff: {duration: 5s, factor: 2, maxDuration: 3m}
  ignoreDifferences:
  - group: apps
    kind: Deployment
    jsonPointers: [/spec/replicas]
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: kustomized}
spec:
  sources:
  - repoURL: https://example.com/repo.git
    path: overlays/prod
    kustomize:
      namePrefix: prod-
      images: [nginx=nginx:1.27]
      replicas: [{name: web, count: 3}]
  destination: {name: in-cluster, namespace: web}
`

func TestLoadApplicationsArgoExample(t *testing.T) {
	apps, err := LoadApplications(strings.NewReader(guestbook))
	if err != nil {
		t.Fatal(err)
	}
	if len(apps) != 2 {
		t.Fatalf("got %d apps", len(apps))
	}
	gb := apps[0]
	if gb.Name != "guestbook" || gb.Spec.Source.Helm.Parameters[0].Value != "v2" || !gb.Spec.SyncPolicy.Automated.SelfHeal {
		t.Fatalf("decoded %+v", gb.Spec)
	}
	if string(gb.Spec.Source.Helm.ValuesObject.Raw) != `{"replicaCount":2}` {
		t.Fatalf("valuesObject = %s", gb.Spec.Source.Helm.ValuesObject.Raw)
	}
	if d, _ := ParseBackoffDuration(gb.Spec.SyncPolicy.Retry.Backoff.MaxDuration); d.Minutes() != 3 {
		t.Fatalf("maxDuration = %v", d)
	}
	k := apps[1].Spec.AllSources()[0].Kustomize
	if k.Replicas[0].Count.IntValue() != 3 || k.Images[0] != "nginx=nginx:1.27" {
		t.Fatalf("kustomize = %+v", k)
	}
}

// loadErrors returns every *LoadError in err.
func loadErrors(t *testing.T, err error) []*LoadError {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	var out []*LoadError
	var walk func(error)
	walk = func(e error) {
		if le, ok := e.(*LoadError); ok {
			out = append(out, le)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	return out
}

func TestLoadApplicationsStrictWithLines(t *testing.T) {
	in := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a}
spec:
  source:
    repoURL: https://example.com/r.git
    pth: apps/a
  destination: {server: https://k, namespace: a}
  syncPolicy:
    retry:
      limit: many
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: b}
spec:
  source: {repoURL: https://example.com/r.git, path: b}
  destination: {server: https://k, name: in-cluster}
  syncPolicy:
    syncOptions: [Prunelast=true]
    retry: {backoff: {duration: soon}}
`
	_, err := LoadApplications(strings.NewReader(in))
	errs := loadErrors(t, err)
	want := []struct {
		doc, line  int
		path, text string
	}{
		{0, 11, "spec.syncPolicy.retry.limit", "cannot be string"},
		{1, 18, "spec.destination", "not both"},
		{1, 20, "spec.syncPolicy.syncOptions[0]", `unknown sync option "Prunelast"`},
		{1, 21, "spec.syncPolicy.retry.backoff.duration", `invalid duration "soon"`},
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d: %v", len(errs), len(want), err)
	}
	for i, w := range want {
		e := errs[i]
		if e.Document != w.doc || e.Line != w.line || e.Path != w.path || !strings.Contains(e.Error(), w.text) {
			t.Errorf("error %d = %q (doc %d line %d path %s), want doc %d line %d path %s containing %q",
				i, e, e.Document, e.Line, e.Path, w.doc, w.line, w.path, w.text)
		}
	}
}

func TestLoadApplicationsUnknownAndDuplicateFields(t *testing.T) {
	in := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a}
spec:
  source:
    repoURL: https://example.com/r.git
    pth: apps/a
  destination: {server: https://k}
`
	errs := loadErrors(t, func() error { _, err := LoadApplications(strings.NewReader(in)); return err }())
	if len(errs) != 1 || errs[0].Path != "spec.source.pth" || errs[0].Line != 7 || !strings.Contains(errs[0].Error(), "unknown field") {
		t.Fatalf("errors %v", errs)
	}
}

func TestLoadApplicationsRefusesWrongKindAndBombs(t *testing.T) {
	_, err := LoadApplications(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"))
	if errs := loadErrors(t, err); len(errs) != 1 || !strings.Contains(errs[0].Error(), "want one argoproj.io/v1alpha1 Application") {
		t.Fatalf("wrong kind: %v", err)
	}
	bomb := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec:\n  a: &a [x,x,x,x,x,x,x,x,x]\n  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
	_, err = LoadApplications(strings.NewReader(bomb))
	if !errors.Is(err, resource.ErrAliasExpansion) {
		t.Fatalf("alias bomb: %v", err)
	}
}

func TestLoadProjects(t *testing.T) {
	in := `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-a}
spec:
  sourceRepos: ['https://example.com/team-a/*']
  destinations: [{server: '*', namespace: 'team-a-*'}, {server: '*', namespace: '!team-a-secret'}]
  clusterResourceBlacklist: [{group: rbac.authorization.k8s.io, kind: ClusterRoleBinding}]
  syncWindows:
  - {kind: deny, schedule: '0 22 * * *', duration: 8h, applications: ['*'], timeZone: Europe/Berlin}
`
	projects, err := LoadProjects(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if p := projects[0]; p.Spec.ClusterResourceBlacklist[0].Kind != "ClusterRoleBinding" || p.Spec.SyncWindows[0].Duration != "8h" {
		t.Fatalf("project %+v", p.Spec)
	}
	bad := strings.NewReplacer("'0 22 * * *'", "'0 25 * * *'", "Europe/Berlin", "Mars/Olympus", "kind: deny", "kind: block").Replace(in)
	errs := loadErrors(t, func() error { _, err := LoadProjects(strings.NewReader(bad)); return err }())
	if len(errs) != 3 {
		t.Fatalf("got %d errors: %v", len(errs), errs)
	}
	for _, e := range errs {
		if e.Line != 9 || !strings.HasPrefix(e.Path, "spec.syncWindows[0].") {
			t.Errorf("error %v at line %d path %s", e, e.Line, e.Path)
		}
	}
}

// TestLoaderRefusesWhatTheEngineCannotHonour: fields Argo CD has whose
// meaning the engine cannot give are refused by name, never dropped.
func TestLoaderRefusesWhatTheEngineCannotHonour(t *testing.T) {
	for field, src := range map[string]string{
		"spec.source.helm.version":                              "helm: {version: v2}",
		"spec.source.kustomize.patches[0].options.allowAnyting": "kustomize: {patches: [{patch: '{}', options: {allowAnyting: true}}]}",
	} {
		_, err := LoadApplications(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a}
spec:
  source: {repoURL: https://example.com/r.git, path: app, ` + src + `}
  destination: {server: https://kubernetes.default.svc, namespace: default}
`))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: got %v, want an error naming it", field, err)
		}
	}
	// What the engine implements loads.
	if _, err := LoadApplications(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a}
spec:
  source:
    repoURL: https://example.com/r.git
    path: app
    kustomize: {version: v4.5.7, forceCommonLabels: true, forceCommonAnnotations: true, labelWithoutSelector: true, ignoreMissingComponents: true, apiVersions: [v1], patches: [{patch: '{}', options: {allowNameChange: true}}]}
  destination: {server: https://kubernetes.default.svc, namespace: default}
`)); err != nil {
		t.Fatalf("implemented kustomize fields: %v", err)
	}
	// Argo CD 3.6 accepts helm.version v3 and v4 (Helm v4 renders v3 charts).
	for _, v := range []string{"v3", "v4"} {
		if _, err := LoadApplications(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a}
spec:
  source: {repoURL: https://example.com/r.git, path: app, helm: {version: ` + v + `}}
  destination: {server: https://kubernetes.default.svc, namespace: default}
`)); err != nil {
			t.Errorf("helm.version %s: %v", v, err)
		}
	}
}
