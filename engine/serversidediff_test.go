package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// TestServerSideDiffInTheEngine: ServerSideDiff=true, on an object, on
// the Application, or engine-wide, compares by a server-side dry run: the
// engine gives the differ its cluster's dry-run client, so such an app is
// Synced after its sync (it was Unknown for lack of wiring) and drift
// shows in its diff.
func TestServerSideDiffInTheEngine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	annotated := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  annotations: {argocd.argoproj.io/compare-options: ServerSideDiff=true}\ndata: {k: v}\n"
	plain := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\n"
	for _, c := range []struct {
		name     string
		manifest string
		appLevel bool
		engine   bool
	}{
		{"object", annotated, false, false},
		{"application", plain, true, false},
		{"engine", plain, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := cluster.TestNamespace(t)
			e := newEngine(t, func(o *Options) { o.ServerSideDiff = c.engine })
			app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": c.manifest}), ns)
			if c.appLevel {
				app.Annotations = map[string]string{resource.AnnotationCompareOptions: "ServerSideDiff=true"}
			}
			if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
				t.Fatalf("sync: %s %v", res.Phase, err)
			}
			refreshUntil(t, e, app, "Synced by a server-side diff", func(st appstatus.Status) bool { return st.Sync == appstatus.Synced })
			// The comparison really asked the server.
			clusterState, err := e.cluster(ctx, app.Spec.Destination)
			if err != nil {
				t.Fatal(err)
			}
			differ, err := e.differFor(app, clusterState)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := resource.Decode("cm.yaml", []byte(c.manifest), resource.DefaultDecodeOptions())
			if err != nil {
				t.Fatal(err)
			}
			objs[0].SetNamespace(ns)
			live, _ := clusterState.Cache().Get(resource.KeyOf(objs[0]))
			if res, err := differ.Diff(ctx, objs[0], live); err != nil || res.Mode != diff.ModeServerSide {
				t.Fatalf("mode %s (%v), want %s", res.Mode, err, diff.ModeServerSide)
			}
			editConfigMap(t, ns, "cm", "k", "drifted")
			st := refreshUntil(t, e, app, "drift seen", func(st appstatus.Status) bool { return st.Sync == appstatus.OutOfSync })
			if len(st.Resources) != 1 || !strings.Contains(st.Resources[0].Diff, "drifted") {
				t.Fatalf("the diff does not show the drift: %+v", st.Resources)
			}
		})
	}
}
