package diff

import (
	"context"
	"errors"
	"testing"
)

// TestSharedRuleCacheCompilesEachExpressionOnce: Differs given one
// RuleCache share the compiled system and application jq rules, ignore
// with them as a Differ that compiles its own does, keep a bad expression
// out of the cache (it still fails New with a *RuleError), and the cache
// drops the least recently used beyond its size.
func TestSharedRuleCacheCompilesEachExpressionOnce(t *testing.T) {
	rules := NewRuleCache(0)
	opts := DefaultOptions()
	opts.Rules = rules
	opts.IgnoreRules = []IgnoreRule{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{".spec.replicas"}}}
	a, b := mustDiffer(t, opts), mustDiffer(t, opts)
	if rules.Len() != 2 { // the system rules' webhook caBundle expression and the app's
		t.Fatalf("cache holds %d expressions, want 2", rules.Len())
	}
	shared := 0
	for i := range a.rules {
		for j := range a.rules[i].jq {
			if a.rules[i].jq[j] != b.rules[i].jq[j] {
				t.Fatalf("rule %d: two Differs sharing a RuleCache compiled %q twice", i, a.rules[i].jq[j].expr)
			}
			shared++
		}
	}
	if shared != 3 {
		t.Fatalf("%d jq rules, want 3", shared)
	}
	alone := opts
	alone.Rules = nil
	own := mustDiffer(t, alone)
	desired := mustObject(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx}]}\n")
	live := desired.DeepCopy()
	live.Object["spec"].(map[string]any)["replicas"] = int64(5)
	for name, d := range map[string]*Differ{"shared": b, "own": own} {
		res, err := d.Diff(context.Background(), desired, live)
		if err != nil {
			t.Fatal(err)
		}
		if res.Modified {
			t.Fatalf("%s rules: the ignored replicas made a difference", name)
		}
	}

	bad := opts
	bad.IgnoreRules = []IgnoreRule{{Kind: "ConfigMap", JQPathExpressions: []string{".data["}}}
	var re *RuleError
	if _, err := New(bad); !errors.As(err, &re) || re.Expression != ".data[" {
		t.Fatalf("bad expression: %v, want a *RuleError naming it", err)
	}
	if rules.Len() != 2 {
		t.Fatalf("a bad expression was cached: %d expressions", rules.Len())
	}

	small := NewRuleCache(1)
	for _, expr := range []string{".a", ".b", ".a"} {
		if _, err := small.compile(expr); err != nil {
			t.Fatal(err)
		}
	}
	if small.Len() != 1 {
		t.Fatalf("a cache of size 1 holds %d expressions", small.Len())
	}
}
