package faults

import (
	"context"
	"fmt"
	"k8s.io/client-go/rest"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/cache"
)

// A restarted API server has a new watch cache that begins at the current
// etcd revision, so a watch resumed from an older resourceVersion is
// answered 410 Gone ("too old resource version"): the real expiry a
// reflector meets after a control-plane upgrade, without waiting for etcd
// compaction. The cache must relist, and end with exactly the live
// objects, the changes made while it could not watch included (deletions
// too: a relist that only adds would keep them forever). The cache is cut
// off from the API server (a gate in its transport) while those changes
// are made, so that only the relist can bring them in.
//
// cache/relist_test.go's TestGoneRelistsOnlyThatKind injects the 410 into
// a fake client (and proves only the expired kind relists); this test gets
// it from a real API server.
func TestWatchExpiryRelists(t *testing.T) {
	ns := cluster.TestNamespace(t)
	dyn := dynamicClient(t)
	cms := dyn.Resource(gvrConfigMaps).Namespace(ns)
	ctx := context.Background()
	for i := range 20 {
		if _, err := cms.Create(ctx, configMap(fmt.Sprintf("cm-%02d", i), "v1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	reg := prometheus.NewRegistry()
	opts := cache.DefaultOptions()
	opts.Name = "faults"
	opts.Namespaces = []string{ns}
	opts.Filter = cache.ResourceFilter{Include: []cache.GroupKindMatch{{Group: "", Kind: "ConfigMap"}}}
	opts.RetryInitial, opts.RetryMax = 100*time.Millisecond, 500*time.Millisecond
	// The gate cuts the cache off the API server (its requests fail as a
	// refused connection would) for as long as the test needs to change
	// things the cache must not see by watch.
	gate := &gate{}
	c, err := cache.New(gate.wrap(cluster.Config()), opts, cache.Collaborators{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() { cancel(); c.Stop() })
	if err := c.Start(cctx); err != nil {
		t.Fatal(err)
	}
	assertCacheMatchesLive(t, c, cms, ns)
	before := counter(t, reg, "gitops_cluster_cache_relists_total")

	// A write of another kind moves etcd's revision past the last
	// ConfigMap event, so the restarted server's watch cache begins after
	// the cache's resourceVersion.
	if _, err := dyn.Resource(gvrSecrets).Namespace(ns).Create(ctx, secret("bump"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gate.close()
	if err := cluster.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	// Changes while the cache is cut off: 5 deleted, 5 updated, 5
	// created.
	for i := range 5 {
		if err := cms.Delete(ctx, fmt.Sprintf("cm-%02d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		cm, err := cms.Get(ctx, fmt.Sprintf("cm-%02d", 10+i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(cm.Object, "v2", "data", "value")
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Create(ctx, configMap(fmt.Sprintf("new-%02d", i), "v1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	if n := counter(t, reg, "gitops_cluster_cache_relists_total"); n != before {
		t.Fatalf("the cache relisted while cut off (%v relists, %v before)", n, before)
	}
	gate.open()
	waitFor(t, time.Minute, "a relist after 410 Gone", func() bool { return counter(t, reg, "gitops_cluster_cache_relists_total") > before })
	assertCacheMatchesLive(t, c, cms, ns)

	// The relisted kind keeps watching.
	if _, err := cms.Create(ctx, configMap("after-relist", "v1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "cm-19", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	assertCacheMatchesLive(t, c, cms, ns)
	if n := len(c.Tainted()); n != 0 {
		t.Errorf("kinds still tainted after the relist: %v", c.Tainted())
	}
}

// assertCacheMatchesLive waits until the cache holds exactly the live
// ConfigMaps of ns, each at its live resourceVersion.
func assertCacheMatchesLive(t *testing.T, c *cache.ClusterCache, cms interface {
	List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error)
}, ns string) {
	t.Helper()
	var live, cached []string
	err := waitUntil(time.Minute, func() bool {
		list, err := cms.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		live = live[:0]
		for _, cm := range list.Items {
			live = append(live, cm.GetName()+"@"+cm.GetResourceVersion())
		}
		sort.Strings(live)
		cached = cachedNames(c, ns)
		return strings.Join(live, ",") == strings.Join(cached, ",")
	})
	if err != nil {
		t.Fatalf("cache and cluster differ:\nlive   %v\ncached %v", live, cached)
	}
}

// cachedNames returns "name@resourceVersion" of the cached ConfigMaps of
// ns, sorted.
func cachedNames(c *cache.ClusterCache, ns string) []string {
	var out []string
	for _, k := range c.Namespace(ns) {
		if k.Kind != "ConfigMap" || k.Group != "" {
			continue
		}
		obj, ok := c.Get(k)
		if !ok {
			continue
		}
		out = append(out, k.Name+"@"+obj.GetResourceVersion())
	}
	sort.Strings(out)
	return out
}

func configMap(name, value string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name},
		"data":     map[string]any{"value": value},
	}}
	return u
}

func secret(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": name},
		"stringData": map[string]any{"k": "v"},
	}}
}

// counter returns the sum of a counter's series in reg.
func counter(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += counterValue(m)
		}
	}
	return sum
}

func counterValue(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return 0
}

// gate fails every request of a client while closed, as a refused
// connection would; requests already streaming (a watch) are not cut.
type gate struct {
	next   http.RoundTripper
	closed atomic.Bool
}

func (g *gate) wrap(cfg *rest.Config) *rest.Config {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { g.next = rt; return g })
	return cfg
}

func (g *gate) close() { g.closed.Store(true) }
func (g *gate) open()  { g.closed.Store(false) }

// RoundTrip implements http.RoundTripper.
func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	if g.closed.Load() {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	return g.next.RoundTrip(r)
}
