package diff

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestForkSharesWhatNewCompiled: a fork compares as its parent does (the
// same ignore rules, the same verdicts and text), masks Secrets with a key
// of its own (the same value gets another placeholder), and costs a small
// part of what New costs.
func TestForkSharesWhatNewCompiled(t *testing.T) {
	opts := DefaultOptions()
	opts.Rules, opts.Types = NewRuleCache(0), NewTypeCache()
	opts.IgnoreRules = []IgnoreRule{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{".spec.replicas"}}}
	parent := mustDiffer(t, opts)
	fork, err := parent.Fork()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	desired := mustObject(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx:1.27}]}\n")
	live := desired.DeepCopy()
	live.Object["spec"].(map[string]any)["replicas"] = int64(5)
	for _, image := range []string{"nginx:1.27", "nginx:1.28"} {
		_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{"name": "web", "image": image}}, "spec", "template", "spec", "containers")
		a, errA := parent.Diff(ctx, desired, live)
		b, errB := fork.Diff(ctx, desired, live)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if a.Modified != b.Modified || a.Text != b.Text || a.Modified != (image != "nginx:1.27") {
			t.Fatalf("live image %s: parent modified=%v %q, fork modified=%v %q", image, a.Modified, a.Text, b.Modified, b.Text)
		}
	}

	changed := loadCorpusCase(t, "testdata/corpus/16-secret-changed.yaml")
	sd, sl := &unstructured.Unstructured{Object: changed.Desired}, &unstructured.Unstructured{Object: changed.LiveCSA}
	a, errA := parent.Diff(ctx, sd, sl)
	b, errB := fork.Diff(ctx, sd, sl)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	assertNoSecret(t, "parent", allOutput(t, a))
	assertNoSecret(t, "fork", allOutput(t, b))
	if !strings.Contains(a.Text, "+masked-") || !strings.Contains(b.Text, "+masked-") || a.Text == b.Text {
		t.Fatalf("the fork's placeholders must be its own:\nparent %s\nfork %s", a.Text, b.Text)
	}

	const n = 50
	cost := func(build func() error) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range n {
			if err := build(); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / n
	}
	newCost := cost(func() error { _, err := New(opts); return err })
	forkCost := cost(func() error { _, err := parent.Fork(); return err })
	t.Logf("bytes allocated per Differ: New %d, Fork %d", newCost, forkCost)
	if forkCost*4 > newCost {
		t.Fatalf("a fork allocates %d B against New's %d B: it should share what New compiles", forkCost, newCost)
	}
}
