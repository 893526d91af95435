package diff

import (
	"context"
	"testing"
)

// A custom resource whose kind the schema does not know (a CRD the
// cluster has not published yet, or BuiltinSchema offline) is compared
// with a deduced schema, lists atomic. Its managedFields were written by
// the server with the CRD's real schema, a keyed list item by item: the
// items desired sets whole are not dropped from the prediction, and the
// result says it was deduced.
func TestDeducedSchemaKeepsKeyedItemsDesiredSetsWhole(t *testing.T) {
	desired := mustObject(t, `apiVersion: example.test/v1
kind: Widget
metadata: {name: w1, namespace: ns}
spec:
  size: 3
  ports: [{name: http, port: 80}, {name: https, port: 443}]
`)
	live := mustObject(t, `apiVersion: example.test/v1
kind: Widget
metadata:
  name: w1
  namespace: ns
  uid: u1
  resourceVersion: "7"
  managedFields:
  - manager: gitops
    operation: Apply
    apiVersion: example.test/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:size: {}
        f:ports:
          k:{"name":"http"}: {.: {}, f:name: {}, f:port: {}}
          k:{"name":"https"}: {.: {}, f:name: {}, f:port: {}}
spec:
  size: 3
  ports: [{name: http, port: 80}, {name: https, port: 443}]
`)
	opts := DefaultOptions()
	opts.Mode = ModeStructuredMerge
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if res.Modified {
		t.Fatalf("in sync under a deduced schema, but Modified:\n%s", res.Text)
	}
	if !res.Deduced {
		t.Fatal("compared with a deduced schema, but Result.Deduced is false")
	}

	// An item desired no longer declares is still seen as removed: the
	// covering rule keeps only what desired sets.
	desired.Object["spec"].(map[string]any)["ports"] = []any{map[string]any{"name": "http", "port": int64(80)}}
	res, err = d.Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Modified {
		t.Fatal("the https item was removed from desired, but the comparison is in sync")
	}

	// A kind the schema knows is not deduced.
	dep := mustObject(t, deployWith("  replicas: 1\n", "image: nginx"))
	res, err = d.Diff(context.Background(), dep, nil)
	if err != nil {
		t.Fatal(err)
	}
	live2 := dep.DeepCopy()
	live2.SetResourceVersion("1")
	if res, err = d.Diff(context.Background(), dep, live2); err != nil || res.Deduced {
		t.Fatalf("a Deployment is modelled: deduced=%v err=%v", res.Deduced, err)
	}
}
