package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/sync"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	preHook  = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pre\n  annotations: {argocd.argoproj.io/hook: PreDelete}\n"
	postHook = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: post\n  annotations: {argocd.argoproj.io/hook: PostDelete}\n"
)

// deleteUntilDone calls Delete until the result is Done.
func deleteUntilDone(t *testing.T, e *Engine, app *Application, req DeleteRequest) sync.DeleteResult {
	t.Helper()
	var res sync.DeleteResult
	eventually(t, time.Minute, "the deletion done", func() bool {
		var err error
		res, err = e.Delete(context.Background(), app, req)
		if err != nil {
			t.Fatalf("delete: %v", err)
		}
		return res.Done()
	})
	return res
}

// TestDeletionHooks: an app's PreDelete hook runs before any of its
// objects is deleted and its PostDelete hook after all are gone; a sync
// never runs them; a failing PreDelete hook stops the deletion with
// nothing deleted.
func TestDeletionHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	ho := health.DefaultOptions()
	ho.Overrides = map[string]string{"ConfigMap": `if obj.metadata.name == "pre" and obj.data ~= nil and obj.data.fail == "yes" then return {status = "Degraded", message = "the check failed"} end
return {status = "Healthy"}`}
	checker, err := health.NewChecker(ho)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, func(o *Options) { o.Health = checker })
	get := func(ns, name string) error {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	}

	ns := cluster.TestNamespace(t)
	app := dirApp(ns, repoDir(t, map[string]string{"app/main.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: main}\n",
		"app/pre.yaml": preHook, "app/post.yaml": postHook}), ns)
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %s %v", res.Phase, err)
	}
	if !apierrors.IsNotFound(get(ns, "pre")) || !apierrors.IsNotFound(get(ns, "post")) {
		t.Fatal("a sync ran a deletion hook")
	}
	refreshUntil(t, e, app, "Synced", func(st appstatus.Status) bool { return st.Sync == appstatus.Synced })
	res, err := e.Delete(ctx, app, DeleteRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) == 0 {
		t.Fatalf("the first Delete deleted nothing: %+v", res)
	}
	// The PreDelete hook ran before the deletes of this very call: it is
	// among the app's objects that call deleted.
	ranFirst := false
	for _, k := range res.Deleted {
		ranFirst = ranFirst || k.Name == "pre"
	}
	if !ranFirst {
		t.Fatalf("the PreDelete hook did not run before the deletes: %+v", res)
	}
	deleteUntilDone(t, e, app, DeleteRequest{})
	if !apierrors.IsNotFound(get(ns, "main")) {
		t.Fatal("main survived the deletion")
	}
	if err := get(ns, "post"); err != nil {
		t.Fatalf("the PostDelete hook did not run: %v", err)
	}

	// A failing PreDelete hook stops the deletion before any delete.
	ns2 := cluster.TestNamespace(t)
	failing := dirApp(ns2, repoDir(t, map[string]string{"app/main.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: main}\n",
		"app/pre.yaml": preHook + "data: {fail: \"yes\"}\n"}), ns2)
	if res, err := e.Sync(ctx, failing, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %s %v", res.Phase, err)
	}
	_, err = e.Delete(ctx, failing, DeleteRequest{})
	var he *DeleteHookError
	if !errors.As(err, &he) || he.Phase != hooks.PreDelete {
		t.Fatalf("delete with a failing PreDelete hook: %v", err)
	}
	if err := get(ns2, "main"); err != nil {
		t.Fatalf("an object was deleted although the PreDelete hook failed: %v", err)
	}
}

// TestDeleteConfirm: an object marked Delete=confirm waits for the
// confirmation; the deletion is not done until it is given.
func TestDeleteConfirm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	e := newEngine(t, nil)
	app := dirApp(ns, repoDir(t, map[string]string{
		"app/keep.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guarded\n  annotations: {argocd.argoproj.io/sync-options: Delete=confirm}\n",
		"app/other.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n",
	}), ns)
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %s %v", res.Phase, err)
	}
	refreshUntil(t, e, app, "Synced", func(st appstatus.Status) bool { return st.Sync == appstatus.Synced })
	var res sync.DeleteResult
	eventually(t, time.Minute, "only the guarded object left", func() bool {
		var err error
		res, err = e.Delete(ctx, app, DeleteRequest{})
		return err == nil && len(res.Deleted) == 0 && len(res.Remaining) == 0
	})
	if res.Done() || len(res.PendingConfirmation) != 1 || res.PendingConfirmation[0].Name != "guarded" {
		t.Fatalf("result %+v, want the guarded object pending confirmation", res)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "guarded", metav1.GetOptions{}); err != nil {
		t.Fatalf("the guarded object was deleted without confirmation: %v", err)
	}
	deleteUntilDone(t, e, app, DeleteRequest{ConfirmDelete: true})
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "guarded", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the confirmed object is still there: %v", err)
	}
}
