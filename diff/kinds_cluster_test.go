package diff

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// TestEndpointsInAnotherOrderAreInSync: an Endpoints stored with its
// subsets, addresses and ports in one order (as the endpoints controller
// writes them, sorted), and a manifest that lists the same set in another
// order and leaves a protocol to its default: in sync with the rule, drift
// without it.
func TestEndpointsInAnotherOrderAreInSync(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ns := cluster.TestNamespace(t)
	stored := mustObject(t, sortedEndpoints)
	stored.SetNamespace(ns)
	live := apply(t, dyn, schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, stored, "endpoints-writer")
	desired := mustObject(t, unorderedEndpoints)
	desired.SetNamespace(ns)
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

// TestDeletedListItemUnderServerSideApply: a container we applied, removed
// from desired by $patch: delete, is a change under structured merge (the
// prediction drops the item our manager owns), never a comparison error.
func TestDeletedListItemUnderServerSideApply(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ns := cluster.TestNamespace(t)
	applied := mustObject(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx}
      - {name: debug, image: busybox}
`)
	applied.SetNamespace(ns)
	live := apply(t, dyn, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, applied, DefaultFieldManager)
	withDirective := applied.DeepCopy()
	containers, _, _ := unstructured.NestedSlice(withDirective.Object, "spec", "template", "spec", "containers")
	containers[1].(map[string]any)["$patch"] = "delete"
	_ = unstructured.SetNestedSlice(withDirective.Object, containers, "spec", "template", "spec", "containers")
	desired, err := NewDirectiveResolver().Resolve(withDirective)
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Mode = ModeStructuredMerge
	res, err := mustDiffer(t, opts).Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatalf("comparison error: %v", err)
	}
	if !res.Modified {
		t.Fatal("the removed container is no change")
	}
	got, _, _ := unstructured.NestedSlice(res.PredictedLive.Object, "spec", "template", "spec", "containers")
	if len(got) != 1 || got[0].(map[string]any)["name"] != "web" {
		t.Fatalf("predicted containers %v, want web alone", got)
	}
}
