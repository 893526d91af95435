package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestValidateFalse: a manifest with a field the schema does not know is
// refused at once (it once retried until the sync's timeout: the server
// answers 500), and applied with Validate=false by a client-side apply, as
// kubectl apply --validate=false does; server-side apply cannot apply an
// undeclared field, and its error says so.
func TestValidateFalse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEngine(t, nil)
	unknown := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loose}\ndata: {k: v}\nnotAField: 1\n"
	ns := cluster.TestNamespace(t)
	app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": unknown}), ns)
	res, err := e.Sync(ctx, app, SyncRequest{})
	if res.Phase == sync.Succeeded || err == nil || !strings.Contains(err.Error(), "notAField") {
		t.Fatalf("strict: %s %v, want the unknown field refused", res.Phase, err)
	}
	app.Spec.SyncPolicy = &SyncPolicy{SyncOptions: []string{"Validate=false"}}
	if res, err := e.Sync(ctx, app, SyncRequest{}); res.Phase == sync.Succeeded || err == nil || !strings.Contains(err.Error(), "ServerSideApply=false") {
		t.Fatalf("Validate=false with server-side apply: %s %v, want an error pointing at ServerSideApply=false", res.Phase, err)
	}
	app.Spec.SyncPolicy = &SyncPolicy{SyncOptions: []string{"Validate=false", "ServerSideApply=false"}}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("Validate=false: %s %v", res.Phase, err)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "loose", metav1.GetOptions{}); err != nil || cm.Data["k"] != "v" {
		t.Fatalf("the object applied without validation: %v", err)
	}
}

// TestPrunePropagationPolicyOrphan: PrunePropagationPolicy=orphan prunes a
// Deployment and leaves its ReplicaSet (the default, foreground, deletes
// it with the Deployment).
func TestPrunePropagationPolicyOrphan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	for _, orphan := range []bool{false, true} {
		ns := cluster.TestNamespace(t)
		dir := repoDir(t, map[string]string{"app/web.yaml": webApp, "app/keep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep}\n"})
		e := newEngine(t, nil)
		app := dirApp(ns, dir, ns)
		if orphan {
			app.Spec.SyncPolicy = &SyncPolicy{SyncOptions: []string{"PrunePropagationPolicy=orphan"}}
		}
		if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
			t.Fatalf("sync: %s %v", res.Phase, err)
		}
		eventually(t, time.Minute, "a ReplicaSet", func() bool {
			rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			return err == nil && len(rs.Items) == 1
		})
		if err := os.Remove(filepath.Join(dir, "app/web.yaml")); err != nil {
			t.Fatal(err)
		}
		refreshUntil(t, e, app, "the Deployment to prune", func(st appstatus.Status) bool { return st.Sync == appstatus.OutOfSync })
		if res, err := e.Sync(ctx, app, SyncRequest{Prune: true}); err != nil || res.Phase != sync.Succeeded {
			t.Fatalf("prune: %s %v", res.Phase, err)
		}
		eventually(t, time.Minute, "the Deployment gone", func() bool {
			_, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		// Foreground deletion removes the ReplicaSet before the Deployment
		// is gone; an orphaned one stays.
		rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if kept := len(rs.Items) == 1 && rs.Items[0].DeletionTimestamp == nil; kept != orphan {
			t.Fatalf("orphan=%v: ReplicaSets %d kept=%v", orphan, len(rs.Items), kept)
		}
	}
}

// TestSelectiveSync: a sync limited to some resources writes only those;
// the others stay OutOfSync.
func TestSelectiveSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	app := dirApp(ns, repoDir(t, map[string]string{
		"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"app/b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	}), ns)
	only := resource.Key{Kind: "ConfigMap", Namespace: ns, Name: "a"}
	res, err := e.Sync(ctx, app, SyncRequest{Resources: []resource.Key{only}})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("selective sync: %s %v", res.Phase, err)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatalf("the selected object: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("an object outside the selection was written: %v", err)
	}
	st := refreshUntil(t, e, app, "a Synced, b missing", func(st appstatus.Status) bool {
		return len(st.Resources) == 2 && st.Resources[0].Status == appstatus.Synced && st.Resources[1].Status == appstatus.OutOfSync
	})
	if st.Sync != appstatus.OutOfSync {
		t.Fatalf("app %s after a partial sync", st.Sync)
	}
}
