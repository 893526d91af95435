package engine

import (
	"context"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

func TestDeleteRemovesTheAppsObjects(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/web.yaml": webApp + `---
apiVersion: v1
kind: ConfigMap
metadata: {name: stays, annotations: {argocd.argoproj.io/sync-options: Delete=false}}
`})
	e := newEngine(t, nil)
	app := dirApp(ns, dir, ns)
	ctx := context.Background()
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	var last sync.DeleteResult
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		last, err = e.Delete(ctx, app, DeleteRequest{})
		return last.Done(), err
	})
	if err != nil {
		t.Fatalf("delete: %v (last %+v)", err, last)
	}
	kc := kubernetes.NewForConfigOrDie(cluster.Config())
	if _, err := kc.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err == nil {
		t.Error("Deployment web survived its app's deletion")
	}
	if _, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{}); err == nil {
		t.Error("ConfigMap settings survived its app's deletion")
	}
	if _, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "stays", metav1.GetOptions{}); err != nil {
		t.Errorf("the Delete=false ConfigMap was deleted: %v", err)
	}
	if h, _ := e.History(context.Background(), v1alpha1.KeyOf(app)); len(h) != 0 {
		t.Error("history kept after the app was deleted")
	}
}
