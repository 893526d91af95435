package engine

import (
	"context"
	"fmt"
	gosync "sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// counterValue sums the samples of a counter family in reg whose labels
// include match.
func counterValue(t *testing.T, reg *prometheus.Registry, name string, match map[string]string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for k, v := range match {
				if !hasLabel(m, k, v) {
					continue metrics
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

func hasLabel(m *dto.Metric, k, v string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == k && l.GetValue() == v {
			return true
		}
	}
	return false
}

// reconciles counts the refreshes of an app.
func reconciles(e *Engine, app string) uint64 {
	return uint64(testutil.ToFloat64(e.metrics.Reconciles.WithLabelValues(app)))
}

// keyEvents records the cache events of some keys, in order.
type keyEvents struct {
	mu   gosync.Mutex
	keys []resource.Key
}

func (k *keyEvents) add(ev cache.Event) { k.mu.Lock(); k.keys = append(k.keys, ev.Key); k.mu.Unlock() }
func (k *keyEvents) since(i int, key resource.Key) (n int, total int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, x := range k.keys[min(i, len(k.keys)):] {
		if x == key {
			n++
		}
	}
	return n, len(k.keys)
}

// TestIgnoredResourceUpdatesCauseNoRefresh runs an engine with the
// ignoreResourceUpdates rules of Argo CD v3's shipped argocd-cm (.all:
// /status; its exclusions leave Deployments watched) on
// the local cluster, with periodic refreshes off: a status-only update of
// a tracked Deployment is counted as ignored and announces nothing (so
// Run refreshes nothing for it), while a label change of another
// Deployment of the same app, on the same watch after it, is announced
// and refreshes the app.
func TestIgnoredResourceUpdatesCauseNoRefresh(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e := newEngine(t, func(o *Options) {
		// The update rules of that argocd-cm: Argo CD 3's defaults, which
		// it repeats (argocdcm's TestArgoCDv3DefaultConfigMapLoads).
		for _, r := range DefaultIgnoreResourceUpdates() {
			o.IgnoreResourceUpdates = append(o.IgnoreResourceUpdates, r)
		}
		o.Interval = -1
		o.Registerer = reg
	})
	ns := cluster.TestNamespace(t)
	deploy := func(name string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  replicas: 0
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: c, image: nginx}]}
`, name)
	}
	app := dirApp(ns, repoDir(t, map[string]string{"app/web.yaml": deploy("web"), "app/marker.yaml": deploy("marker")}), ns)
	ctx := context.Background()
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced and Healthy", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced && s.Health.Code == health.Healthy })
	startRun(t, e, app)
	eventually(t, time.Minute, "Run to see the app Synced", func() bool {
		s, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && s.Sync == appstatus.Synced && s.Health.Code == health.Healthy
	})
	cstate, err := e.cluster(ctx, app.Spec.Destination)
	if err != nil {
		t.Fatal(err)
	}
	var rec keyEvents
	defer cstate.Cache().Subscribe(rec.add)()
	web := resource.Key{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "web"}
	marker := resource.Key{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "marker"}

	cs, _ := kubernetes.NewForConfig(cluster.Config())
	ignoredBefore := counterValue(t, reg, "gitops_cluster_cache_ignored_updates_total", nil)
	_, mark := rec.since(0, web)
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status.CollisionCount = ptr.To[int32](7)
	if _, err := cs.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the cache to hold the status update, counted as ignored", func(context.Context) (bool, error) {
		o, ok := cstate.Cache().Get(web)
		if !ok {
			return false, nil
		}
		st, _ := o.Object["status"].(map[string]any)
		return fmt.Sprint(st["collisionCount"]) == "7" && counterValue(t, reg, "gitops_cluster_cache_ignored_updates_total", nil) > ignoredBefore, nil
	})
	before := reconciles(e, app.Name)
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "marker", types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The marker's event comes after the status update's on the same
	// watch: once it is delivered, an event for the status update would
	// have been too.
	eventually(t, time.Minute, "the marker's label change announced", func() bool { n, _ := rec.since(mark, marker); return n > 0 })
	if n, _ := rec.since(mark, web); n != 0 {
		t.Fatalf("the status-only update of web was announced %d time(s): it would refresh the app", n)
	}
	eventually(t, time.Minute, "the marker's change to refresh the app", func() bool { return reconciles(e, app.Name) > before })
	if s, _ := e.Apps().AppStatus(v1alpha1.KeyOf(app)); s.Sync != appstatus.Synced {
		t.Fatalf("after the updates: %s", s.Sync)
	}
}

// TestHardRefreshBypassesTheRenderCache: Refresh is answered without a
// render (from its memo or the render cache), HardRefresh renders again (a
// miss), and the app stays Synced; Run with periodic refreshes off still
// hard-refreshes every HardInterval.
func TestHardRefreshBypassesTheRenderCache(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e := newEngine(t, func(o *Options) { o.Registerer = reg })
	ns := cluster.TestNamespace(t)
	app := dirApp(ns, repoDir(t, map[string]string{"app/web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n"}), ns)
	ctx := context.Background()
	miss := func() float64 {
		return counterValue(t, reg, "gitops_render_requests_total", map[string]string{"result": "miss"})
	}
	// served counts the refreshes answered without rendering: from the
	// render cache or from the refresh memo.
	served := func() float64 {
		return counterValue(t, reg, "gitops_render_requests_total", map[string]string{"result": "hit"}) +
			counterValue(t, reg, "gitops_refresh_total", map[string]string{"how": "memoized"})
	}
	if res, err := e.Sync(ctx, app, SyncRequest{}); err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("sync: %v %s", err, res.Summary())
	}
	refreshUntil(t, e, app, "Synced", func(s appstatus.Status) bool { return s.Sync == appstatus.Synced })
	m0, s0 := miss(), served()
	if _, err := e.Refresh(ctx, app); err != nil || miss() != m0 || served() != s0+1 {
		t.Fatalf("a plain refresh: err %v, misses %v -> %v, served %v -> %v", err, m0, miss(), s0, served())
	}
	st, err := e.HardRefresh(ctx, app)
	if err != nil || st.Sync != appstatus.Synced {
		t.Fatalf("hard refresh: %v %s", err, st.Sync)
	}
	if miss() != m0+1 || served() != s0+1 {
		t.Fatalf("a hard refresh must render past the cache: misses %v -> %v, served %v -> %v", m0, miss(), s0+1, served())
	}
	if _, err := e.Refresh(ctx, app); err != nil || miss() != m0+1 || served() != s0+2 {
		t.Fatalf("the refresh after a hard one is served without a render again: misses %v, served %v", miss(), served())
	}

	// Run with periodic refreshes off: only hard refreshes come, every
	// HardInterval.
	reg2 := prometheus.NewRegistry()
	e2 := newEngine(t, func(o *Options) {
		o.Registerer = reg2
		o.Interval = -1
		o.HardInterval = 300 * time.Millisecond
	})
	startRun(t, e2, app)
	eventually(t, time.Minute, "three hard refreshes", func() bool {
		return counterValue(t, reg2, "gitops_render_requests_total", map[string]string{"result": "miss"}) >= 3
	})
}
