package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A field removed from Git is a difference: the live object still has it,
// and the next sync (server-side apply, which removes the fields we owned
// and no longer send) takes it away. Refresh must say OutOfSync, not
// compare only the fields Git still has.
func TestFieldRemovedFromGitIsOutOfSync(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {keep: a, drop: b}\n"})
	e := newEngine(t, nil)
	app := dirApp(ns, dir, ns)
	ctx := context.Background()
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	if err := os.WriteFile(filepath.Join(dir, "app/cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {keep: a}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := e.Refresh(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sync != appstatus.OutOfSync {
		t.Fatalf("a field removed from Git is not reported: %+v", st.Resources)
	}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	cm, err := kubernetes.NewForConfigOrDie(cluster.Config()).CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Data["drop"]; ok {
		t.Fatalf("the sync left the removed field: %v", cm.Data)
	}
	refreshUntil(t, e, app, "Synced after the sync", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
}
