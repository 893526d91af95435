package appsets_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/appsets"
)

// listSet is a list set of one app per element (a ConfigMap folder each),
// with the resources finalizer; extra is appended to its spec.
func listSet(name, url, dest string, elements []string, extra string) string {
	els := ""
	for _, el := range elements {
		els += fmt.Sprintf("      - {name: %s}\n", el)
	}
	return fmt.Sprintf(`
metadata: {name: %s}
spec:
  generators:
  - list:
      elements:
%s
  template:
    metadata:
      name: '{{name}}'
      finalizers: [resources-finalizer.argocd.argoproj.io]
    spec:
      project: default
      source: {repoURL: %s, targetRevision: main, path: 'apps/{{name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: %s}
      syncPolicy: {automated: {prune: true}}
%s`, name, els, url, dest, extra)
}

// TestPreserveResourcesOnDeletion: under preserveResourcesOnDeletion an
// Application the set stops generating is deleted without its objects,
// and deleting the set deletes its Applications (the garbage collector,
// through their ownerReferences) and not their objects; a set without it
// takes its Applications' objects with them.
func TestPreserveResourcesOnDeletion(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	url := e.repo(t, "keepobjs", map[string]string{"apps/a/cm.yaml": configMap("a"), "apps/b/cm.yaml": configMap("b"),
		"apps/c/cm.yaml": configMap("c")})
	dest := cluster.TestNamespace(t)
	e.createSet(t, listSet("kept", url, dest, []string{"a", "b"}, "  syncPolicy: {preserveResourcesOnDeletion: true}"))
	e.createSet(t, listSet("gone", url, dest, []string{"c"}, ""))
	e.waitSynced(t, "a", "b", "c")
	eventually(t, "the reconciler's finalizer on the preserving set only", func() (bool, string) {
		k, g := e.set(t, "kept"), e.set(t, "gone")
		return slices.Contains(k.Finalizers, appsets.Finalizer) && !slices.Contains(g.Finalizers, appsets.Finalizer),
			fmt.Sprintf("kept %v, gone %v", k.Finalizers, g.Finalizers)
	})

	// b is no longer generated: the app goes, its ConfigMap stays.
	e.patch(t, &v1alpha1.ApplicationSet{}, "kept", `{"spec":{"generators":[{"list":{"elements":[{"name":"a"}]}}]}}`)
	e.waitGone(t, "b")
	if !e.configMapExists(t, dest, "b") {
		t.Fatal("preserveResourcesOnDeletion: b's ConfigMap was deleted with its app")
	}

	// Deleting the sets: their apps go through garbage collection.
	for _, name := range []string{"kept", "gone"} {
		if err := e.c.Delete(context.Background(), e.set(t, name)); err != nil {
			t.Fatal(err)
		}
	}
	e.waitGone(t, "a")
	e.waitGone(t, "c")
	eventually(t, "the sets gone", func() (bool, string) {
		return e.set(t, "kept") == nil && e.set(t, "gone") == nil, "a set still exists"
	})
	eventually(t, "c's ConfigMap deleted with its app", func() (bool, string) {
		return !e.configMapExists(t, dest, "c"), "ConfigMap c still exists"
	})
	if !e.configMapExists(t, dest, "a") {
		t.Fatal("preserveResourcesOnDeletion: a's ConfigMap was deleted with the set")
	}
}
