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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const labelledDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app.kubernetes.io/instance: NAME}}
  template:
    metadata: {labels: {app.kubernetes.io/instance: NAME}}
    spec:
      containers: [{name: web, image: example.com/web:1}]
`

// TestLabelTracking: with Argo CD's label method an app's objects carry
// app.kubernetes.io/instance; the ReplicaSet and Pods that inherit the
// label from the template are not taken for the app's own (not OutOfSync,
// never pruned), and an object removed from Git is pruned.
func TestLabelTracking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{
		"app/web.yaml": strings.ReplaceAll(labelledDeployment, "NAME", ns),
		"app/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
	})
	e := newEngine(t, func(o *Options) {
		o.Tracking = resource.DefaultTracking()
		o.Tracking.Method = resource.TrackingLabel
	})
	app := dirApp(ns, dir, ns)
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %s %v", res.Phase, err)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "extra", metav1.GetOptions{})
	if err != nil || cm.Labels[resource.DefaultTrackingLabel] != ns || cm.Annotations[resource.AnnotationTrackingID] != "" {
		t.Fatalf("the ConfigMap's tracking: labels %v annotations %v (%v)", cm.Labels, cm.Annotations, err)
	}
	eventually(t, time.Minute, "a ReplicaSet with the inherited label", func() bool {
		rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(rs.Items) > 0 && rs.Items[0].Labels[resource.DefaultTrackingLabel] == ns
	})
	st := refreshUntil(t, e, app, "Synced", func(st appstatus.Status) bool { return st.Sync == appstatus.Synced })
	for _, r := range st.Resources {
		if r.Key.Kind == "ReplicaSet" || r.Key.Kind == "Pod" {
			t.Fatalf("a controller's copy is listed as the app's: %+v", r)
		}
	}
	if err := os.Remove(filepath.Join(dir, "app/cm.yaml")); err != nil {
		t.Fatal(err)
	}
	if res, err := e.Sync(ctx, app, SyncRequest{Prune: true}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync with prune: %s %v", res.Phase, err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "extra", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the removed ConfigMap was not pruned: %v", err)
	}
	rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(rs.Items) == 0 {
		t.Fatalf("the ReplicaSet was pruned: %v", err)
	}
}

// TestTrackingArgoCDAdoptsArgosObjects: an object that Argo CD already
// manages (its tracking-id annotation) is the app's own at once with
// TrackingArgoCD: Synced, nothing to write.
func TestTrackingArgoCDAdoptsArgosObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns,
		Annotations: map[string]string{resource.AnnotationArgoTrackingID: ns + ":/ConfigMap:" + ns + "/settings"}},
		Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, live, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, func(o *Options) { o.Tracking = resource.TrackingArgoCD() })
	app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {k: v}\n"}), ns)
	st := refreshUntil(t, e, app, "the Argo CD object adopted", func(st appstatus.Status) bool { return len(st.Resources) == 1 })
	if st.Sync != appstatus.Synced {
		t.Fatalf("an object Argo CD manages, equal to Git, is %s: %+v", st.Sync, st.Resources)
	}
	res, err := e.Sync(ctx, app, SyncRequest{})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %s %v", res.Phase, err)
	}
	refreshUntil(t, e, app, "Synced", func(st appstatus.Status) bool { return st.Sync == appstatus.Synced })
	got, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if got.Annotations[resource.AnnotationArgoTrackingID] != ns+":/ConfigMap:"+ns+"/settings" || got.Annotations[resource.AnnotationTrackingID] != "" {
		t.Fatalf("annotations after the sync: %v", got.Annotations)
	}
}
