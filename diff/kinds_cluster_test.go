package diff

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// TestEndpointsRepackedByTheServerAreInSync: the API server repacks an
// Endpoints' subsets (sorted addresses and ports) and defaults each port's
// protocol. A manifest in another order is in sync with the rule, and drift
// without it.
func TestEndpointsRepackedByTheServerAreInSync(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ns := cluster.TestNamespace(t)
	desired := mustObject(t, unorderedEndpoints)
	desired.SetNamespace(ns)
	live := apply(t, dyn, schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, desired, DefaultFieldManager)
	d := mustDiffer(t, DefaultOptions())
	res, err := d.Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if res.Modified {
		t.Fatalf("Endpoints as the server stored them are drift: %v\n%s", res.Changes, res.Text)
	}
	d.norm.byKind = nil
	if res, err = d.Diff(context.Background(), desired, live); err != nil || !res.Modified {
		t.Fatalf("without the Endpoints rule: modified %v, err %v; the server kept %v", res.Modified, err, live.Object["subsets"])
	}
}

// TestEmptyRulesAsStoredAreInSync: a ClusterRole applied with rules: [] is
// stored with no rules; it is in sync, and the normalised desired role,
// as the live one, has no rules (without the rule it keeps rules: []).
func TestEmptyRulesAsStoredAreInSync(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	desired := mustObject(t, emptyRulesRole)
	desired.SetName("empty-rules-" + cluster.TestNamespace(t))
	gvr := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	live := apply(t, dyn, gvr, desired, DefaultFieldManager)
	t.Cleanup(func() { _ = dyn.Resource(gvr).Delete(context.Background(), desired.GetName(), metav1.DeleteOptions{}) })
	for _, mode := range []Mode{ModeThreeWay, ModeStructuredMerge} {
		opts := DefaultOptions()
		opts.Mode = mode
		d := mustDiffer(t, opts)
		res, err := d.Diff(context.Background(), desired, live)
		if err != nil {
			t.Fatal(err)
		}
		if res.Modified {
			t.Fatalf("%s: rules: [] as stored is drift: %v\n%s", mode, res.Changes, res.Text)
		}
		if _, ok := res.Desired.Object["rules"]; ok || live.Object["rules"] != nil {
			t.Fatalf("%s: desired rules %v, live rules %v: want neither", mode, res.Desired.Object["rules"], live.Object["rules"])
		}
		d.norm.byKind = nil
		if res, err = d.Diff(context.Background(), desired, live); err != nil || res.Desired.Object["rules"] == nil {
			t.Fatalf("%s without the RBAC rule: desired rules %v, err %v: the test proves nothing", mode, res.Desired.Object["rules"], err)
		}
	}
}
