package render_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/cache/store/redisstore"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/plain"
	"github.com/kubegitops/gitops/render/rendertest"
)

// refRenderer reads <app>/ref, which names another file of the tree, and
// returns one ConfigMap holding that file's content: a render that depends on
// a path outside its application, as a values file or a base does.
type refRenderer struct {
	renders atomic.Int64
	block   chan struct{} // when not nil, Render waits on it
	fail    error
}

func (r *refRenderer) Identity(render.Input) (render.Identity, error) {
	return render.Identity{Tool: "ref", Version: "test", Options: struct{ Fail bool }{r.fail != nil}}, nil
}

func (r *refRenderer) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	r.renders.Add(1)
	if r.block != nil {
		select {
		case <-r.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if r.fail != nil {
		return nil, r.fail
	}
	root := render.NewRoot(in.FS, render.Limits{})
	ref, err := root.ReadFile(path.Join(in.Path, "ref"))
	if err != nil {
		return nil, err
	}
	data, err := root.ReadFile(strings.TrimSpace(string(ref)))
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(string(data), "bad") {
		return nil, errors.New("bad values")
	}
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": path.Base(in.Path)},
		"data":     map[string]any{"value": string(data), "replicas": int64(3)},
	}}
	return []*unstructured.Unstructured{cm}, nil
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func refTree() *rendertest.Snapshot {
	return rendertest.NewSnapshot(fstest.MapFS{
		"apps/a/ref":           file("shared/values-a.yaml"),
		"apps/b/ref":           file("shared/values-b.yaml"),
		"shared/values-a.yaml": file("A1"),
		"shared/values-b.yaml": file("B1"),
		"unrelated/readme":     file("x"),
	})
}

func TestCachedHitsWhenNothingReadChanged(t *testing.T) {
	ctx := context.Background()
	r := &refRenderer{}
	c := render.Cached(r, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{})
	snap := refTree()
	in := render.Input{FS: snap, Path: "apps/a"}
	first, err := c.Render(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	// A new commit that touches an unrelated path and the other app's input.
	in.FS = snap.With(map[string]*fstest.MapFile{"unrelated/readme": file("y"), "shared/values-b.yaml": file("B2")})
	second, err := c.Render(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.renders.Load(); n != 1 {
		t.Fatalf("renders = %d, want 1 (second render should hit)", n)
	}
	if fmt.Sprint(first[0].Object) != fmt.Sprint(second[0].Object) {
		t.Fatalf("hit differs from the render:\n%v\n%v", first[0].Object, second[0].Object)
	}
	if _, ok := second[0].Object["data"].(map[string]any)["replicas"].(int64); !ok {
		t.Fatal("a cache hit must keep integers as int64, as a fresh render does")
	}
	// The returned objects are the caller's: mutating them does not poison the cache.
	second[0].SetName("mutated")
	third, _ := c.Render(ctx, in)
	if third[0].GetName() != "a" {
		t.Fatal("mutating a returned object changed the cached output")
	}
}

func TestCachedMissesWhenADependencyOutsideTheAppChanges(t *testing.T) {
	ctx := context.Background()
	r := &refRenderer{}
	c := render.Cached(r, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{})
	snap := refTree()
	if _, err := c.Render(ctx, render.Input{FS: snap, Path: "apps/a"}); err != nil {
		t.Fatal(err)
	}
	changed := snap.With(map[string]*fstest.MapFile{"shared/values-a.yaml": file("A2")})
	objs, err := c.Render(ctx, render.Input{FS: changed, Path: "apps/a"})
	if err != nil {
		t.Fatal(err)
	}
	if r.renders.Load() != 2 {
		t.Fatalf("renders = %d, want 2: a values file outside the app changed", r.renders.Load())
	}
	if got := objs[0].Object["data"].(map[string]any)["value"]; got != "A2" {
		t.Fatalf("value = %v, want A2", got)
	}
	// Deleting the dependency is a change too (it digests as absent).
	gone := snap.With(map[string]*fstest.MapFile{"shared/values-a.yaml": nil})
	if _, err := c.Render(ctx, render.Input{FS: gone, Path: "apps/a"}); err == nil {
		t.Fatal("render with a deleted dependency was served from the cache")
	}
}

func TestCachedMonorepoCommitRerendersOnlyTheTouchedApp(t *testing.T) {
	ctx := context.Background()
	files := fstest.MapFS{}
	for i := 0; i < 100; i++ {
		files[fmt.Sprintf("apps/app%03d/cm.yaml", i)] = file(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app%03d\ndata:\n  v: \"1\"\n", i))
	}
	snap := rendertest.NewSnapshot(files)
	counting := &countingRenderer{next: plain.New(plain.DefaultOptions())}
	c := render.Cached(counting, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{})
	renderAll := func(fsys *rendertest.Snapshot) {
		for i := 0; i < 100; i++ {
			if _, err := c.Render(ctx, render.Input{FS: fsys, Path: fmt.Sprintf("apps/app%03d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	renderAll(snap)
	if counting.n.Load() != 100 {
		t.Fatalf("cold renders = %d, want 100", counting.n.Load())
	}
	next := snap.With(map[string]*fstest.MapFile{"apps/app042/cm.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app042\ndata:\n  v: \"2\"\n")})
	renderAll(next)
	if got := counting.n.Load() - 100; got != 1 {
		t.Fatalf("a commit touching one app re-rendered %d apps, want exactly 1", got)
	}
}

type countingRenderer struct {
	next interface {
		render.Renderer
		render.Identifier
	}
	n atomic.Int64
}

func (c *countingRenderer) Identity(in render.Input) (render.Identity, error) {
	return c.next.Identity(in)
}

func (c *countingRenderer) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	c.n.Add(1)
	return c.next.Render(ctx, in)
}

func TestCachedIdenticalConcurrentRendersRunOnce(t *testing.T) {
	r := &refRenderer{block: make(chan struct{})}
	reg := prometheus.NewRegistry()
	c := render.Cached(r, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{Registerer: reg})
	snap := refTree()
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Render(context.Background(), render.Input{FS: snap, Path: "apps/a"})
			errs <- err
		}()
	}
	// Wait until all ten requests were counted as misses, then release.
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return testutil.ToFloat64(requests(t, reg, "miss")) == 10, nil
	})
	if err != nil {
		t.Fatalf("requests did not arrive: %v", err)
	}
	close(r.block)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := r.renders.Load(); n != 1 {
		t.Fatalf("renders = %d, want 1", n)
	}
}

func requests(t *testing.T, reg *prometheus.Registry, result string) prometheus.Collector {
	t.Helper()
	return gatherer{reg, "gitops_render_requests_total", result}
}

// gatherer reads one labelled counter of a registry as a Collector for
// testutil.ToFloat64.
type gatherer struct {
	reg    *prometheus.Registry
	name   string
	result string
}

func (g gatherer) Describe(chan<- *prometheus.Desc) {}
func (g gatherer) Collect(ch chan<- prometheus.Metric) {
	mfs, _ := g.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != g.name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == g.result || g.result == "" {
					ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(g.name, "", nil, nil), prometheus.GaugeValue, m.GetCounter().GetValue()+m.GetGauge().GetValue())
					return
				}
			}
			if g.result == "" {
				ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(g.name, "", nil, nil), prometheus.GaugeValue, m.GetCounter().GetValue()+m.GetGauge().GetValue())
				return
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(g.name, "", nil, nil), prometheus.GaugeValue, 0)
}

func TestCachedFailuresBackOffAndCanBeBypassed(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(10000, 0)
	boom := errors.New("template: boom")
	r := &refRenderer{fail: boom}
	c := render.Cached(r, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{
		FailureBackoff: 10 * time.Second, MaxFailureBackoff: 25 * time.Second, Now: func() time.Time { return now },
	})
	in := render.Input{FS: refTree(), Path: "apps/a"}
	for attempt, wantBackoff := range []time.Duration{10 * time.Second, 20 * time.Second, 25 * time.Second} {
		if _, err := c.Render(ctx, in); !errors.Is(err, boom) {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		rendersBefore := r.renders.Load()
		_, err := c.Render(ctx, in)
		var fre *render.FailedRenderError
		if !errors.As(err, &fre) || !errors.Is(err, boom) {
			t.Fatalf("attempt %d: a render within the backoff returned %v, want a FailedRenderError wrapping the cause", attempt, err)
		}
		if r.renders.Load() != rendersBefore {
			t.Fatalf("attempt %d: a cached failure rendered again", attempt)
		}
		if got := fre.Until.Sub(now); got != wantBackoff {
			t.Fatalf("attempt %d: backoff %v, want %v", attempt, got, wantBackoff)
		}
		now = now.Add(wantBackoff)
	}
	// Refresh bypasses the cached failure.
	_, _ = c.Render(ctx, in)
	before := r.renders.Load()
	if _, err := c.Refresh(ctx, in); errors.As(err, new(*render.FailedRenderError)) || r.renders.Load() != before+1 {
		t.Fatalf("Refresh served the cached failure: %v", err)
	}
	// Changed inputs (here a values file outside the app that the failed
	// render read) are not blocked by the old failure.
	r2 := &refRenderer{}
	c2 := render.Cached(r2, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{Now: func() time.Time { return now }})
	in.FS = refTree().With(map[string]*fstest.MapFile{"shared/values-a.yaml": file("bad")})
	_, _ = c2.Render(ctx, in)
	if _, err := c2.Render(ctx, in); !errors.As(err, new(*render.FailedRenderError)) {
		t.Fatalf("second render of the same bad inputs = %v, want the cached failure", err)
	}
	in.FS = refTree().With(map[string]*fstest.MapFile{"shared/values-a.yaml": file("fixed")})
	if _, err := c2.Render(ctx, in); err != nil {
		t.Fatalf("a render with changed inputs = %v, want a fresh, successful render", err)
	}
}

func TestCachedStoreDownStillRenders(t *testing.T) {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer client.Close()
	reg := prometheus.NewRegistry()
	c := render.Cached(&refRenderer{}, redisstore.New(client, redisstore.Options{Timeout: 200 * time.Millisecond}), render.CacheOptions{Registerer: reg})
	objs, err := c.Render(ctx, render.Input{FS: refTree(), Path: "apps/a"})
	if err != nil || len(objs) != 1 {
		t.Fatalf("render with the store down = %d objects, %v; want the render", len(objs), err)
	}
	if got := testutil.ToFloat64(gatherer{reg, "gitops_render_store_errors_total", ""}); got < 1 {
		t.Fatalf("store errors = %v, want at least 1", got)
	}
}

func TestCachedBoundsParallelismWithAPendingGauge(t *testing.T) {
	r := &refRenderer{block: make(chan struct{})}
	reg := prometheus.NewRegistry()
	c := render.Cached(r, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{MaxConcurrent: 2, Registerer: reg})
	files := fstest.MapFS{"shared/v": file("v")}
	for i := 0; i < 6; i++ {
		files[fmt.Sprintf("apps/%d/ref", i)] = file("shared/v")
	}
	snap := rendertest.NewSnapshot(files)
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Render(context.Background(), render.Input{FS: snap, Path: fmt.Sprintf("apps/%d", i)})
		}()
	}
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return testutil.ToFloat64(gatherer{reg, "gitops_render_pending", ""}) == 4 && r.renders.Load() == 2, nil
	})
	if err != nil {
		t.Fatalf("want 2 running and 4 pending; running %d pending %v", r.renders.Load(), testutil.ToFloat64(gatherer{reg, "gitops_render_pending", ""}))
	}
	close(r.block)
	wg.Wait()
	if r.renders.Load() != 6 {
		t.Fatalf("renders = %d, want 6", r.renders.Load())
	}
	if got := testutil.ToFloat64(gatherer{reg, "gitops_render_pending", ""}); got != 0 {
		t.Fatalf("pending after completion = %v", got)
	}
}

// TestS18CacheKeyCoversEveryInputField changes every field of Input (and
// of every tool option struct inside it) one at a time and checks that the
// key changes, so that no option can be served output rendered under
// another (argo-cd#29766).
func TestS18CacheKeyCoversEveryInputField(t *testing.T) {
	ctx := context.Background()
	files := fstest.MapFS{"app/cm.yaml": file("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")}
	files["app-changed/cm.yaml"] = files["app/cm.yaml"]
	snap := rendertest.NewSnapshot(files)
	c := render.Cached(plain.New(plain.DefaultOptions()), store.NewMemory(store.MemoryOptions{}), render.CacheOptions{})
	base := render.Input{FS: snap, Path: "app", AppName: "a", Namespace: "ns", KubeVersion: "1.37.2", APIVersions: []string{"v1"}}
	baseKey, _, err := c.Key(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	muts, skipped := rendertest.Mutations(base)
	if fmt.Sprint(skipped) != "[FS]" {
		t.Fatalf("fields the walker could not change: %v, want only FS (keyed by content)", skipped)
	}
	if len(muts) < 40 {
		t.Fatalf("only %d mutations: the walker missed fields", len(muts))
	}
	for _, m := range muts {
		key, _, err := c.Key(ctx, m.Value.(render.Input))
		if err != nil {
			t.Errorf("%s: %v", m.Field, err)
			continue
		}
		if key == baseKey {
			t.Errorf("changing Input.%s does not change the cache key", m.Field)
		}
	}
}

// versioned reports a configurable library version.
type versioned struct {
	refRenderer
	version string
}

func (v *versioned) Identity(in render.Input) (render.Identity, error) {
	id, err := v.refRenderer.Identity(in)
	id.Version = v.version
	return id, err
}

// TestS18ToolVersionMissesTheCache: the same inputs rendered by another
// version of the tool's library do not hit entries of the old one.
func TestS18ToolVersionMissesTheCache(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory(store.MemoryOptions{})
	in := render.Input{FS: refTree(), Path: "apps/a"}
	old := &versioned{version: "helm.sh/helm/v3@v3.21.0"}
	if _, err := render.Cached(old, st, render.CacheOptions{}).Render(ctx, in); err != nil {
		t.Fatal(err)
	}
	upgraded := &versioned{version: "helm.sh/helm/v3@v3.22.0"}
	if _, err := render.Cached(upgraded, st, render.CacheOptions{}).Render(ctx, in); err != nil {
		t.Fatal(err)
	}
	if upgraded.renders.Load() != 1 {
		t.Fatal("a new library version was served the old version's output")
	}
}
