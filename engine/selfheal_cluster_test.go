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

// configMapValue reads data[key] of a live ConfigMap ("" when absent).
func configMapValue(t *testing.T, cs kubernetes.Interface, ns, name, key string) string {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return cm.Data[key]
}

// TestSelfHealHealsTheSameDriftTwice: the decision skipped a self-heal
// whose drift fingerprint equalled the last one's, whatever the time since,
// as long as the app had not been seen Synced in between (here an object
// kept by Prune=false leaves it OutOfSync): the same hand edit made twice
// was healed once, never again.
func TestSelfHealHealsTheSameDriftTwice(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{
		"app/a.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n",
		"app/keep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  annotations: {argocd.argoproj.io/sync-options: Prune=false}\n",
	})
	e := newEngine(t, func(o *Options) { o.Interval = 2 * time.Second })
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
		return ok && st.Sync == appstatus.OutOfSync && len(st.Resources) == 2
	})
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		editConfigMap(t, ns, "a", "k", "drifted")
		eventually(t, time.Minute, "drift number "+string(rune('0'+i))+" healed", func() bool {
			return configMapValue(t, cs, ns, "a", "k") == "v"
		})
	}
	// The next refresh after the heal says what it did: only the kept
	// object differs.
	eventually(t, time.Minute, "only the kept object out of sync", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		if !ok {
			return false
		}
		for _, r := range st.Resources {
			if r.Key.Name == "a" && r.Status != appstatus.Synced {
				return false
			}
		}
		return st.Sync == appstatus.OutOfSync
	})
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "keep", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Fatal("the Prune=false object was pruned")
	}
}

// TestSelfHealBacksOffADriftASyncCannotFix: another writer sets a field
// back each time a self-heal fixes it. Self-heal retries it (it did once,
// then never again), each time after a longer wait (Argo CD's defaults:
// 2 s, 6 s, 18 s ... up to 5 minutes), not in a loop.
func TestSelfHealBacksOffADriftASyncCannotFix(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	dir := repoDir(t, map[string]string{"app/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"})
	notes := &noteLog{}
	e := newEngine(t, func(o *Options) { o.Interval = 2 * time.Second; o.Notify = notes.add })
	app := automated(dirApp(ns, dir, ns))
	startRun(t, e, app)
	eventually(t, time.Minute, "Synced", func() bool {
		st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced
	})
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	// The other writer: it watches the ConfigMap and writes its own value
	// back whenever a sync changed it.
	ctx, cancel := context.WithCancel(context.Background())
	fought := make(chan struct{})
	t.Cleanup(func() { cancel(); <-fought })
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=a"})
	if err != nil {
		t.Fatal(err)
	}
	before := notes.count(appstatus.NotifySyncStarted, app.Name)
	start := time.Now()
	go func() {
		defer close(fought)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case _, open := <-w.ResultChan():
				if !open {
					return
				}
				if configMapValue(t, cs, ns, "a", "k") != "theirs" {
					cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
					if err == nil {
						cm.Data["k"] = "theirs"
						_, _ = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
					}
				}
			}
		}
	}()
	eventually(t, 150*time.Second, "three self-heal syncs", func() bool {
		return notes.count(appstatus.NotifySyncStarted, app.Name)-before >= 3
	})
	var at []time.Time
	notes.mu.Lock()
	for _, n := range notes.notes {
		if n.Type == appstatus.NotifySyncStarted && n.Key == v1alpha1.KeyOf(app) && !n.Time.Before(start) {
			at = append(at, n.Time)
		}
	}
	notes.mu.Unlock()
	if len(at) < 3 {
		t.Fatalf("%d self-heal syncs since the writer started", len(at))
	}
	// The waits between self-heals grow by Argo CD's factor of 3: 6 s,
	// then 18 s (the first heal came 2 s after the first sync).
	if g := at[1].Sub(at[0]); g < 5*time.Second {
		t.Errorf("second self-heal %v after the first, want about 6 s", g)
	}
	if g := at[2].Sub(at[1]); g < 17*time.Second {
		t.Errorf("third self-heal %v after the second, want about 18 s", g)
	}
}
