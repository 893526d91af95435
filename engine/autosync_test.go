package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestRunDoesNotRepeatASyncThatChangesNothing: an object kept by
// Prune=false leaves the app OutOfSync after a successful sync; the run
// loop must not sync the same revision again and again (it did every 5 s).
func TestRunDoesNotRepeatASyncThatChangesNothing(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{
		"app/a.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n",
		"app/keep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  annotations: {argocd.argoproj.io/sync-options: Prune=false}\n",
	})
	notes := &noteLog{}
	e := newEngine(t, func(o *Options) { o.Interval = 2 * time.Second; o.Notify = notes.add })
	app := automated(dirApp(ns, dir, ns))
	startRun(t, e, app)
	eventually(t, time.Minute, "Synced", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced
	})
	if err := os.Remove(filepath.Join(dir, "app/keep.yaml")); err != nil {
		t.Fatal(err)
	}
	e.Apps().Hint(dir)
	eventually(t, time.Minute, "OutOfSync with the kept object", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		if !ok || st.Sync != appstatus.OutOfSync {
			return false
		}
		for _, r := range st.Resources {
			if r.Key.Name == "keep" && r.RequiresPruning && r.PruneDisabled {
				return true
			}
		}
		return false
	})
	before := notes.count(appstatus.NotifySyncStarted, app.Name)
	deadline := time.Now().Add(time.Minute)
	eventually(t, 2*time.Minute, "a minute of refreshes", func() bool { return time.Now().After(deadline) })
	if n := notes.count(appstatus.NotifySyncStarted, app.Name) - before; n > 0 {
		t.Fatalf("%d automated syncs in a minute of a revision whose sync changes nothing", n)
	}
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "keep", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Fatal("the Prune=false object was pruned")
	}
	// Real drift is still healed.
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "drifted"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "drift healed", func() bool {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "a", metav1.GetOptions{})
		return err == nil && cm.Data["k"] == "v"
	})
}

func TestHealthReasonNamesTheConditionsOfAnUnknownApp(t *testing.T) {
	t.Parallel()
	st := appstatus.Status{Health: health.Status{Code: health.Unknown}, Conditions: []appstatus.Condition{{Type: appstatus.ConditionComparisonError, Message: "repository unreachable"}}}
	if got := healthReason(st); got != "ComparisonError: repository unreachable" {
		t.Fatalf("reason %q", got)
	}
	st.Health = health.Status{Code: health.Degraded, Message: "Caused by apps/Deployment ns/web: crash"}
	if got := healthReason(st); got != st.Health.Message {
		t.Fatalf("reason %q, want the aggregated message", got)
	}
	st.Health = health.Status{Code: health.Healthy}
	if got := healthReason(st); got != "" {
		t.Fatalf("a healthy app's reason %q", got)
	}
}
