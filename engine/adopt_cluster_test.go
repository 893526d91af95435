package engine

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/sync"
)

// adoptManifests are an app's objects that another writer creates first,
// with exactly this content.
const adoptManifests = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  color: blue
  size: large
---
apiVersion: v1
kind: Service
metadata:
  name: front
spec:
  ports:
  - port: 80
    targetPort: 8080
`

// TestUntrackedObjectComparedWhole: objects another writer created with
// exactly the desired content, not yet tracked by the app, are compared
// with the whole live object (the cache keeps them lean), as Argo CD reads
// the full live object of an untracked target: the only difference a
// refresh reports is the tracking annotation a sync adds, never the
// objects' data or spec; health is judged from the whole object. A sync
// adopts them, and the next refresh is Synced with no diff.
// (examples/readmehost/FRICTION.md, item 12.)
func TestUntrackedObjectComparedWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	dyn, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(adoptManifests, "---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		gvr := schema.GroupVersionResource{Version: "v1", Resource: strings.ToLower(obj.GetKind()) + "s"}
		data, err := obj.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		force := true
		if _, err := dyn.Resource(gvr).Namespace(ns).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "pipeline-test", Force: &force}); err != nil {
			t.Fatal(err)
		}
	}

	e := newEngine(t, func(o *Options) { o.Sync.WaitFinalWave = false })
	app := dirApp(ns, repoDir(t, map[string]string{"app/objects.yaml": adoptManifests}), ns)
	st, err := e.Refresh(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Resources) != 2 {
		t.Fatalf("rows: %+v", st.Resources)
	}
	for _, row := range st.Resources {
		for _, field := range []string{"color", "size", "ports", "targetPort"} {
			if strings.Contains(row.Diff, field) {
				t.Errorf("%s: the diff shows %q, which the live object has:\n%s", row.Key, field, row.Diff)
			}
		}
		if row.Status == appstatus.OutOfSync && !strings.Contains(row.Diff, "tracking") {
			t.Errorf("%s: OutOfSync for something else than the tracking annotation:\n%s", row.Key, row.Diff)
		}
		if row.Key.Kind == "Service" && (row.Health == nil || row.Health.Code != "Healthy") {
			t.Errorf("Service health %+v, want Healthy judged from the whole object", row.Health)
		}
	}

	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	st = refreshUntil(t, e, app, "Synced after the adopting sync", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	for _, row := range st.Resources {
		if row.Diff != "" || row.Status != appstatus.Synced {
			t.Errorf("%s after the sync: %s\n%s", row.Key, row.Status, row.Diff)
		}
	}
}
