package argocdcm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/sync"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// TestArgoCDDefaultsPruneClusterScopedObjects: with Defaults a
// ClusterRole removed from Git is pruned, as Argo CD prunes it; with the
// library's defaults it is kept and reported.
func TestArgoCDDefaultsPruneClusterScopedObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	for _, argo := range []bool{false, true} {
		ns := cluster.TestNamespace(t)
		role := ns + "-reader"
		dir := repoDir(t, map[string]string{
			"app/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
			"app/role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " + role + "}\nrules: []\n",
		})
		t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{}) })
		e := newEngine(t, func(o *gitops.Options) {
			if argo {
				d := Defaults()
				o.Sync.ApplyOutOfSyncOnly, o.Sync.WaitFinalWave, o.Sync.PruneClusterScoped = d.Sync.ApplyOutOfSyncOnly, d.Sync.WaitFinalWave, d.Sync.PruneClusterScoped
				o.Tracking = d.Tracking
			}
		})
		app := dirApp(ns, dir, ns)
		if res, err := e.Sync(ctx, app, gitops.SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
			t.Fatalf("argo=%v sync: %s %v", argo, res.Phase, err)
		}
		if err := os.Remove(filepath.Join(dir, "app/role.yaml")); err != nil {
			t.Fatal(err)
		}
		refreshUntil(t, e, app, "the ClusterRole to prune", func(st appstatus.Status) bool { return st.Sync == appstatus.OutOfSync })
		if res, err := e.Sync(ctx, app, gitops.SyncRequest{Prune: true}); err != nil || res.Phase != sync.Succeeded {
			t.Fatalf("argo=%v prune: %s %v", argo, res.Phase, err)
		}
		// A prune deletes with Argo CD's foreground propagation: the
		// object may stay, with a deletion timestamp, until the garbage
		// collector has seen to its dependents.
		got, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
		pruned := apierrors.IsNotFound(err) || (err == nil && got.DeletionTimestamp != nil)
		if pruned != argo {
			t.Fatalf("argo=%v: ClusterRole pruned=%v (get: %v)", argo, pruned, err)
		}
		if argo {
			gone := func(ctx context.Context) (bool, error) {
				_, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
				return apierrors.IsNotFound(err), nil
			}
			pctx, cancel := context.WithTimeout(ctx, time.Minute)
			err := wait.PollUntilContextCancel(pctx, 200*time.Millisecond, true, gone)
			cancel()
			if err != nil {
				t.Fatalf("argo=true: the pruned ClusterRole is still there after a minute: %v", err)
			}
		}
	}
}
