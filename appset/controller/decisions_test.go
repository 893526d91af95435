package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gitops "github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/sync"
)

// TestAppSetClusterDecisionResource: a clusterDecisionResource generator
// reads its duck type's ConfigMap and a decision resource (a custom
// resource of a CRD installed by syncing an app) from the cluster, and
// yields an Application per decision naming a known cluster.
func TestAppSetClusterDecisionResource(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	group := ns + ".placement.test"
	e := newEngine(t, nil)
	setup := dirApp(ns, repoDir(t, map[string]string{"app/crd.yaml": fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: placementdecisions.%[1]s}
spec:
  group: %[1]s
  names: {kind: PlacementDecision, plural: placementdecisions, singular: placementdecision, listKind: PlacementDecisionList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: %[1]s/v1
kind: PlacementDecision
metadata: {name: guestbook, labels: {placement: guestbook}}
status:
  decisions:
  - {clusterName: in-cluster, reason: chosen}
  - {clusterName: not-a-cluster, reason: unknown}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: placement-duck}
data: {apiVersion: %[1]s/v1, kind: PlacementDecision, statusListKey: decisions, matchKey: clusterName}
`, group)}), ns)
	res, err := e.Sync(context.Background(), setup, gitops.SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("setup sync: %v %s", err, res.Summary())
	}
	sets, err := appset.Load(strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: placed}
spec:
  generators:
  - clusterDecisionResource:
      configMapRef: placement-duck
      labelSelector: {matchLabels: {placement: guestbook}}
      requeueAfterSeconds: 30
      values: {tier: 'front-{{reason}}'}
  template:
    metadata: {name: 'guestbook-{{name}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/x.git, path: guestbook}
      destination: {server: '{{server}}', namespace: '{{values.tier}}'}
`))
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.ControllerNamespace = ns
	opts = withDefaults(e, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gen, err := appset.Generate(ctx, &sets[0], opts.Generate)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range gen.Applications {
		dest := a.Object["spec"].(map[string]any)["destination"].(map[string]any)
		got = append(got, fmt.Sprintf("%s %s %s", a.GetName(), dest["server"], dest["namespace"]))
	}
	if want := []string{"guestbook-in-cluster https://kubernetes.default.svc front-chosen"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestAppSetNameConflicts: a set never takes over an Application it does
// not own: one of Run's own, or another set's.
func TestAppSetNameConflicts(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"})
	e := newEngine(t, func(o *gitops.Options) { o.Interval = time.Hour })
	own := dirApp("taken", dir, ns)
	startRun(t, e, own)
	eventually(t, time.Minute, "Run running", func() bool { return e.Apps().Running() })
	load := func(name, elements string) appset.ApplicationSet {
		sets, err := appset.Load(strings.NewReader(fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: %s}
spec:
  generators: [{list: {elements: %s}}]
  template:
    metadata: {name: '{{app}}'}
    spec:
      source: {repoURL: %s, path: app}
      destination: {server: https://kubernetes.default.svc, namespace: %s}
`, name, elements, dir, ns)))
		if err != nil {
			t.Fatal(err)
		}
		return sets[0]
	}
	ctl := startAppSets(t, e, []appset.ApplicationSet{
		load("a", "[{app: taken}, {app: a-only}, {app: shared}]"),
		load("b", "[{app: shared}]"),
	}, DefaultOptions())
	eventually(t, time.Minute, "both sets generated", func() bool {
		a, _ := ctl.Status("", "a")
		b, _ := ctl.Status("", "b")
		return a.Reconciles > 0 && b.Reconciles > 0
	})
	a, _ := ctl.Status("", "a")
	b, _ := ctl.Status("", "b")
	if slices.Contains(appNames(a.Applications), "taken") || !errors.Is(a.Err, ErrAppOwned) || !strings.Contains(a.Err.Error(), `"taken"`) {
		t.Fatalf("set a took Run's own app: %+v", a)
	}
	aShared, bShared := slices.Contains(appNames(a.Applications), "shared"), slices.Contains(appNames(b.Applications), "shared")
	if aShared == bShared {
		t.Fatalf("shared owned by a: %v, by b: %v", aShared, bShared)
	}
	if loser := map[bool]Status{true: b, false: a}[aShared]; !errors.Is(loser.Err, ErrAppOwned) {
		t.Fatalf("the set that lost %q reports %v", "shared", loser.Err)
	}
	if !slices.Contains(appNames(a.Applications), "a-only") {
		t.Fatalf("set a: %+v", a)
	}
}
