package diff

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestSharedTypeCacheBuildsEachKindOnce: two Differs given one TypeCache
// read the same tree of a kind (built once), and compare as a Differ with
// its own trees does.
func TestSharedTypeCacheBuildsEachKindOnce(t *testing.T) {
	types := NewTypeCache()
	opts := DefaultOptions()
	opts.Types = types
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	if a.trees.forGVK(gvk) == nil || a.trees.forGVK(gvk) != b.trees.forGVK(gvk) {
		t.Fatal("two Differs sharing a TypeCache built the Deployment tree twice")
	}
	if alone.trees.forGVK(gvk) == a.trees.forGVK(gvk) {
		t.Fatal("a Differ without a TypeCache shares trees")
	}
	desired := mustObject(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx, resources: {limits: {cpu: '0.5'}}}]}\n")
	live := desired.DeepCopy()
	live.Object["spec"].(map[string]any)["replicas"] = int64(3)
	for name, d := range map[string]*Differ{"shared": b, "own": alone} {
		res, err := d.Diff(context.Background(), desired, live)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Modified {
			t.Fatalf("%s trees: replicas 2 against 3 is not a difference", name)
		}
	}
}
