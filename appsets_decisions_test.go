package gitops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

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
	res, err := e.Sync(context.Background(), setup, SyncRequest{})
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
	opts := DefaultAppSetOptions()
	opts.ControllerNamespace = ns
	opts = e.appSetDefaults(opts)
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
