package appsets_test

import (
	"fmt"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/appsets"
)

// TestControllerSettings: the ApplicationSet controller's own settings
// (argocd-cmd-params-cm applicationsetcontroller.*) over a set's. With
// policy create-update and no override, the set's applicationsSync: sync
// does not delete an Application it no longer generates; without
// progressive syncs, the set's RollingSync is ignored and the Applications
// keep their template's automated sync; a global preserved annotation
// stays on an update; the status lists at most one resource, counting
// both.
func TestControllerSettings(t *testing.T) {
	t.Parallel()
	e := startSets(t, nil, false, func(o *appsets.Options) {
		o.Settings = appsets.ControllerSettings{Policy: v1alpha1.ApplicationsSyncCreateUpdate, PreservedAnnotations: []string{"acme.com/keep"},
			MaxStatusResources: 1}
	})
	url := e.repo(t, "settings", map[string]string{"apps/one/cm.yaml": configMap("one"), "apps/two/cm.yaml": configMap("two")})
	dest := cluster.TestNamespace(t)
	set := `
metadata: {name: governed}
spec:
  generators:
  - list:
      elements:
      - {name: one}
      - {name: two}
  strategy:
    type: RollingSync
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: In, values: [dev]}]
  syncPolicy: {applicationsSync: sync}
  template:
    metadata:
      name: 'governed-{{name}}'
      labels: {env: dev, rev: '%s'}
    spec:
      project: default
      source: {repoURL: %s, targetRevision: main, path: 'apps/{{name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: %s}
      syncPolicy: {automated: {prune: true}}
`
	e.createSet(t, fmt.Sprintf(set, "1", url, dest))
	e.waitSynced(t, "governed-one", "governed-two")
	for _, n := range []string{"governed-one", "governed-two"} {
		if a := e.app(t, n); a.Spec.SyncPolicy == nil || a.Spec.SyncPolicy.Automated == nil {
			t.Fatalf("%s lost its automated sync: RollingSync applied with progressive syncs off", n)
		}
	}
	eventually(t, "a status of one resource, counting two", func() (bool, string) {
		s := e.set(t, "governed")
		return len(s.Status.Resources) == 1 && s.Status.ResourcesCount == 2, fmt.Sprintf("%d resources, count %d", len(s.Status.Resources), s.Status.ResourcesCount)
	})
	e.patch(t, &v1alpha1.Application{}, "governed-one", `{"metadata":{"annotations":{"acme.com/keep":"mine","acme.com/drop":"x"}}}`)
	e.patch(t, &v1alpha1.ApplicationSet{}, "governed", `{"spec":{"template":{"metadata":{"labels":{"rev":"2"}}}}}`)
	eventually(t, "governed-one updated, keeping acme.com/keep", func() (bool, string) {
		a := e.app(t, "governed-one")
		return a.Labels["rev"] == "2" && a.Annotations["acme.com/keep"] == "mine" && a.Annotations["acme.com/drop"] == "",
			fmt.Sprintf("labels %v annotations %v", a.Labels, a.Annotations)
	})
	// One generation drops two and relabels one: once one is relabelled,
	// that generation has been applied.
	e.patch(t, &v1alpha1.ApplicationSet{}, "governed",
		`{"spec":{"generators":[{"list":{"elements":[{"name":"one"}]}}],"template":{"metadata":{"labels":{"rev":"3"}}}}}`)
	eventually(t, "governed-one relabelled by the generation without two", func() (bool, string) {
		a := e.app(t, "governed-one")
		return a.Labels["rev"] == "3", fmt.Sprintf("labels %v", a.Labels)
	})
	if a := e.app(t, "governed-two"); a == nil || a.DeletionTimestamp != nil {
		t.Fatal("governed-two deleted: the set's applicationsSync won over the controller's create-update policy")
	}
}
