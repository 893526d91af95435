package engine

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestRunUpsertAndRemoveWhileRunning: the app set of a running engine
// changes without a restart: an app added from a real Git server is
// synced, a changed spec takes effect, and a removed app is no longer
// reconciled (drift stays) while its objects stay.
func TestRunUpsertAndRemoveWhileRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	if _, err := gs.CreateRepository(ctx, "live", fstest.MapFS{
		"one/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\ndata: {k: v}\n")},
		"two/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\ndata: {k: v}\n")},
	}); err != nil {
		t.Fatal(err)
	}
	url := gs.RepoURL("live")
	nsA, nsB := cluster.TestNamespace(t), cluster.TestNamespace(t)
	e := newEngine(t, func(o *Options) { o.Interval = time.Hour })
	if err := e.Apps().Upsert(*gitApp(nsA, url, gs.Branch(), nsA)); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Upsert before Run: %v, want ErrNotRunning", err)
	}
	first := gitApp(nsA, url, gs.Branch(), nsA)
	first.Spec.Source.Path = "one"
	startRun(t, e, first)
	synced := func(name string) func() bool {
		return func() bool {
			st, ok := e.Apps().AppStatus(v1alpha1.AppKey{Name: name})
			return ok && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy
		}
	}
	eventually(t, time.Minute, "the first app Synced", synced(first.Name))

	second := gitApp(nsB, url, gs.Branch(), nsB)
	second.Spec.Source.Path = "two"
	bad := *second
	bad.Spec.Source = nil
	var invalid *InvalidApplicationError
	if err := e.Apps().Upsert(bad); !errors.As(err, &invalid) {
		t.Fatalf("Upsert of an app without a source: %v", err)
	}
	added := time.Now()
	if err := e.Apps().Upsert(*second); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the added app Synced", synced(second.Name))
	t.Logf("an added app was Synced %s after Upsert", time.Since(added).Round(time.Millisecond))
	cs, _ := kubernetes.NewForConfig(cluster.Config())
	if _, err := cs.CoreV1().ConfigMaps(nsB).Get(ctx, "two", metav1.GetOptions{}); err != nil {
		t.Fatalf("the added app's object: %v", err)
	}

	// A changed spec takes effect: the second app now deploys folder one.
	changed := *second
	src := *second.Spec.Source
	src.Path = "one"
	changed.Spec.Source = &src
	if err := e.Apps().Upsert(changed); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the changed app deploys folder one", func() bool {
		_, err := cs.CoreV1().ConfigMaps(nsB).Get(ctx, "one", metav1.GetOptions{})
		return err == nil
	})

	if err := e.Apps().Remove(v1alpha1.KeyOf(first)); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(e.Apps().ManagedApps(), v1alpha1.KeyOf(first)) {
		t.Fatal("a removed app is still managed")
	}
	if _, ok := e.Apps().AppStatus(v1alpha1.KeyOf(first)); ok {
		t.Fatal("a removed app still has a status")
	}
	// Drift of the removed app is not healed; its object stays.
	cm, err := cs.CoreV1().ConfigMaps(nsA).Get(ctx, "one", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("a removed app's object was deleted: %v", err)
	}
	cm.Data["k"] = "drifted"
	if _, err := cs.CoreV1().ConfigMaps(nsA).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The remaining app is still healed, which shows the loop runs.
	editConfigMap(t, nsB, "one", "k", "drifted")
	eventually(t, time.Minute, "the managed app healed", func() bool {
		cm, err := cs.CoreV1().ConfigMaps(nsB).Get(ctx, "one", metav1.GetOptions{})
		return err == nil && cm.Data["k"] == "v"
	})
	if cm, _ := cs.CoreV1().ConfigMaps(nsA).Get(ctx, "one", metav1.GetOptions{}); cm.Data["k"] != "drifted" {
		t.Fatal("a removed app was healed")
	}
}
