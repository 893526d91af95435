package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestPeriodicRefreshesOff: with a negative Interval (Argo CD's
// timeout.reconciliation: 0) a change in Git is not picked up by a timer,
// only by a hint.
func TestPeriodicRefreshesOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	e := newEngine(t, func(o *Options) { o.Interval = -1; o.Jitter = -1 })
	app := automated(dirApp(ns, dir, ns))
	startRun(t, e, app)
	eventually(t, time.Minute, "Synced", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced
	})
	if err := os.WriteFile(filepath.Join(dir, "app/b.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	// A default interval would be minutes; what matters is that nothing
	// is on a timer at all: three seconds without a refresh.
	deadline := time.Now().Add(3 * time.Second)
	eventually(t, time.Minute, "three quiet seconds", func() bool { return time.Now().After(deadline) })
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the change was synced without a hint: %v", err)
	}
	e.Apps().Hint(dir)
	eventually(t, time.Minute, "the change synced after the hint", func() bool {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{})
		return err == nil
	})
}
