package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/sync"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestTerminateARunningSync: Terminate stops a sync waiting on its first
// wave: the next wave is never written, the SyncFail hook runs, the
// operation ends Failed "operation terminated" at once (not retried by the
// app's retry policy), and that is the app's last operation.
func TestTerminateARunningSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	ho := health.DefaultOptions()
	ho.Overrides = map[string]string{"ConfigMap": `if obj.metadata.name == "slow" then return {status = "Progressing", message = "forever"} end
return {status = "Healthy"}`}
	checker, err := health.NewChecker(ho)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, func(o *Options) { o.Health = checker; o.Sync.WaveTimeout = 10 * time.Minute })
	app := dirApp(ns, repoDir(t, map[string]string{
		"app/slow.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: slow}\n",
		"app/later.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: later\n  annotations: {argocd.argoproj.io/sync-wave: \"1\"}\n",
		"app/onfail.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: onfail\n  annotations: {argocd.argoproj.io/hook: SyncFail}\n",
	}), ns)
	app.Spec.SyncPolicy = &SyncPolicy{Retry: &RetryStrategy{Limit: 3}}
	if err := e.Terminate(v1alpha1.KeyOf(app)); !errors.Is(err, ErrNoOperation) {
		t.Fatalf("Terminate with nothing running: %v", err)
	}
	type outcome struct {
		res sync.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.Sync(ctx, app, SyncRequest{})
		done <- outcome{res, err}
	}()
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	eventually(t, time.Minute, "the first wave written", func() bool {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "slow", metav1.GetOptions{})
		return err == nil
	})
	if err := e.Terminate(v1alpha1.KeyOf(app)); err != nil {
		t.Fatal(err)
	}
	var got outcome
	select {
	case got = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the terminated sync did not return")
	}
	if got.res.Phase != sync.Failed || !errors.Is(got.err, sync.ErrTerminated) || !strings.Contains(got.res.Message, "operation terminated") {
		t.Fatalf("got %s %q %v, want Failed: operation terminated", got.res.Phase, got.res.Message, got.err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "later", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the wave after the termination was written (get: %v)", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "onfail", metav1.GetOptions{}); err != nil {
		t.Fatalf("the SyncFail hook did not run: %v", err)
	}
	if op, _ := e.LastOperation(ctx, v1alpha1.KeyOf(app)); op == nil || op.Phase != sync.Failed || !strings.Contains(op.Message, "operation terminated") {
		t.Fatalf("last operation %+v", op)
	}
	if err := e.Terminate(v1alpha1.KeyOf(app)); !errors.Is(err, ErrNoOperation) {
		t.Fatalf("Terminate after the end: %v", err)
	}
}
