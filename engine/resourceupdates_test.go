package engine

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/health"
)

// The judge of watched updates: a tracked object's change in ignored
// fields alone, with its health unchanged, needs no refresh; a change
// anywhere else, a change of health, or an untracked object does.
func TestUpdateIgnorerJudgesChanges(t *testing.T) {
	// The rules of an argocd-cm whose only key is
	// resource.customizations.ignoreResourceUpdates.ConfigMap
	// (jqPathExpressions: ['.data.heartbeat']), as argocdcm's Apply gives
	// them (its tests check that): Argo CD 3's defaults, the ConfigMap one
	// replaced by the key's.
	opts := DefaultOptions()
	for k, r := range DefaultIgnoreResourceUpdates() {
		if k == "ConfigMap" {
			r = ResourceIgnoreDifferences{Kind: "ConfigMap", JQPathExpressions: []string{".data.heartbeat"}}
		}
		opts.IgnoreResourceUpdates = append(opts.IgnoreResourceUpdates, r)
	}
	hc, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	u, err := newUpdateIgnorer(opts, hc)
	if err != nil || u == nil {
		t.Fatalf("%v %v", u, err)
	}
	tracking := opts.Tracking
	dep := func(mut func(o *unstructured.Unstructured)) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "ns", "resourceVersion": "1", "generation": int64(1)},
			"spec":     map[string]any{"replicas": int64(1)},
			"status": map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1),
				"availableReplicas": int64(1), "readyReplicas": int64(1)},
		}}
		if err := tracking.Set(o, "app"); err != nil {
			t.Fatal(err)
		}
		if mut != nil {
			mut(o)
		}
		return o
	}
	base := dep(nil)
	cases := map[string]struct {
		cur  *unstructured.Unstructured
		skip bool
	}{
		"status and resourceVersion only": {dep(func(o *unstructured.Unstructured) {
			o.SetResourceVersion("2")
			_ = unstructured.SetNestedField(o.Object, int64(3), "status", "collisionCount")
		}), true},
		"generation (observed) and managedFields only": {dep(func(o *unstructured.Unstructured) {
			o.SetGeneration(2)
			_ = unstructured.SetNestedField(o.Object, int64(2), "status", "observedGeneration")
			o.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "x"}}
		}), true},
		"generation not yet observed (health Progressing)": {dep(func(o *unstructured.Unstructured) {
			o.SetGeneration(2)
		}), false},
		"spec": {dep(func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, int64(2), "spec", "replicas")
		}), false},
		"a label": {dep(func(o *unstructured.Unstructured) { o.SetLabels(map[string]string{"a": "b"}) }), false},
		"status that changes health": {dep(func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, int64(0), "status", "availableReplicas")
			_ = unstructured.SetNestedField(o.Object, int64(0), "status", "readyReplicas")
		}), false},
	}
	for name, c := range cases {
		if got := u.Skip(base, c.cur); got != c.skip {
			t.Errorf("%s: skip = %v, want %v", name, got, c.skip)
		}
	}
	untracked := func(ann map[string]string, v string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "ns"}, "data": map[string]any{"heartbeat": v, "k": "v"}}}
		o.SetAnnotations(ann)
		return o
	}
	if u.Skip(untracked(nil, "1"), untracked(nil, "2")) {
		t.Error("an untracked object's update was judged")
	}
	ann := map[string]string{AnnotationIgnoreResourceUpdates: "true"}
	if !u.Skip(untracked(ann, "1"), untracked(ann, "2")) {
		t.Error("an annotated untracked object's change of an ignored field needs a refresh")
	}
	changed := untracked(ann, "2")
	changed.Object["data"].(map[string]any)["k"] = "w"
	if u.Skip(untracked(ann, "1"), changed) {
		t.Error("a change of data.k was ignored")
	}
}

// A rule that fails on an object (a jq error) never drops its update: the
// app is refreshed, as it would be without the rule.
func TestUpdateIgnorerFailingRuleRefreshes(t *testing.T) {
	opts := DefaultOptions()
	opts.IgnoreResourceUpdates = []ResourceIgnoreDifferences{{Kind: "ConfigMap", JQPathExpressions: []string{`.data.k | error("boom")`}}}
	hc, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	u, err := newUpdateIgnorer(opts, hc)
	if err != nil {
		t.Fatal(err)
	}
	cm := func(rv string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "ns", "resourceVersion": rv}, "data": map[string]any{"k": "v"}}}
		if err := opts.Tracking.Set(o, "app"); err != nil {
			t.Fatal(err)
		}
		return o
	}
	if u.Skip(cm("1"), cm("2")) {
		t.Fatal("an update judged by a failing rule was dropped")
	}
	// A rule that does not compile is refused when the engine is built.
	opts.IgnoreResourceUpdates = []ResourceIgnoreDifferences{{Kind: "ConfigMap", JSONPointers: []string{"no-slash"}}}
	opts.Clusters = []ClusterConfig{{Name: "offline", Server: "https://offline.invalid"}}
	if _, err := newWithBuiltins(opts); err == nil || !strings.Contains(err.Error(), "IgnoreResourceUpdates") {
		t.Fatalf("a bad rule: %v", err)
	}
}

// A resource.exclusions entry limited to some clusters (as argocdcm's
// Apply puts it into the cache filter) applies to those clusters only: the
// engine reports an excluded desired object on a matching destination and
// keeps it on another.
func TestExclusionsLimitedToClusters(t *testing.T) {
	opts := DefaultOptions()
	opts.Cache.Filter.Exclude = append(cache.DefaultExclusions(), cache.GroupKindMatch{Kind: "ConfigMap", Clusters: []string{"https://*.prod.example.net"}})
	opts.Clusters = []ClusterConfig{{Name: "eu", Server: "https://eu.prod.example.net"}, {Name: "dev", Server: "https://dev.example.net"}}
	e, err := newWithBuiltins(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	for name, wantExcluded := range map[string]bool{"eu": true, "dev": false} {
		cs, err := e.destination(ApplicationDestination{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		app := &Application{Spec: ApplicationSpec{Destination: ApplicationDestination{Name: name, Namespace: "ns"}}}
		_, excluded := e.parts().desired.SplitExcluded(app, desiredView(cs), []*unstructured.Unstructured{cm})
		if (len(excluded) == 1) != wantExcluded {
			t.Errorf("cluster %s: excluded %v, want excluded=%v", name, excluded, wantExcluded)
		}
	}
}
