package faults

import (
	"context"
	"fmt"
	"github.com/kubegitops/gitops/internal/redistest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/cache/store/redisstore"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/plain"
)

// storeTimeout is the Redis store's per-operation timeout in these tests.
const storeTimeout = 300 * time.Millisecond

// countingRenderer is the plain renderer, counting the renders that reach
// it (the cache's misses).
type countingRenderer struct {
	plain   *plain.Renderer
	renders atomic.Int64
}

// Render implements render.Renderer.
func (c *countingRenderer) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	c.renders.Add(1)
	return c.plain.Render(ctx, in)
}

// Identity implements render.Identifier, so the output is cached.
func (c *countingRenderer) Identity(in render.Input) (render.Identity, error) {
	return c.plain.Identity(in)
}

// replica is one engine's render cache: its own memory tier in front of
// the shared Redis, as the engine's Options.RenderStore would be built.
type replica struct {
	cached   *render.CachedRenderer
	renderer *countingRenderer
	reg      *prometheus.Registry
	logs     *logBuffer
}

// newReplica builds a replica over a Redis client made the way a host
// would make one: go-redis defaults, no tuning for failure.
func newReplica(t *testing.T, addr string) *replica {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { client.Close() })
	reg := prometheus.NewRegistry()
	logs := &logBuffer{}
	far := redisstore.New(client, redisstore.Options{Timeout: storeTimeout, Registerer: reg})
	near := store.NewMemory(store.MemoryOptions{})
	r := &countingRenderer{plain: plain.New(plain.Options{})}
	cached := render.Cached(r, store.Tiered{Near: near, Far: far}, render.CacheOptions{
		Registerer: reg, Logger: logs.logger(), DecodedEntries: -1,
	})
	return &replica{cached: cached, renderer: r, reg: reg, logs: logs}
}

// appTree is a repository with one plain app per name.
func appTree(names ...string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for _, n := range names {
		fsys["apps/"+n+"/cm.yaml"] = &fstest.MapFile{Data: []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {k: v}\n", n))}
	}
	return fsys
}

// renderTimed renders app from tree and fails the test unless it succeeds
// with the app's one object within limit.
func (r *replica) renderTimed(t *testing.T, tree fstest.MapFS, app string, limit time.Duration) {
	t.Helper()
	start := time.Now()
	objs, err := r.cached.Render(context.Background(), render.Input{FS: tree, Path: "apps/" + app, Tool: render.KindPlain})
	took := time.Since(start)
	if err != nil || len(objs) != 1 || objs[0].GetName() != app {
		t.Fatalf("render %s: %d objects, %v", app, len(objs), err)
	}
	if took > limit {
		t.Fatalf("render %s took %s, more than %s", app, took, limit)
	}
}

// missBound is the longest a cache miss may take when the store fails: a
// miss makes three store calls (read the dependency list, write it, write
// the output), each bounded by the store's timeout, plus the render.
const missBound = 3*storeTimeout + time.Second

// Redis, shared by two replicas, dies: renders still succeed at once (a
// refused connection costs nothing), from the memory tier when it has the
// output and by rendering when not; the failure is counted and logged.
// Redis comes back (empty, on the same address) and is used again: what
// one replica renders, another finds there.
func TestRedisDownRendersStillWork(t *testing.T) {
	srv := redistest.Start(t)
	tree := appTree("a", "b", "c")
	one, two := newReplica(t, srv.Addr), newReplica(t, srv.Addr)

	one.renderTimed(t, tree, "a", missBound)
	two.renderTimed(t, tree, "a", missBound)
	if n := two.renderer.renders.Load(); n != 0 {
		t.Fatalf("replica two rendered %d times; want its first render served from Redis", n)
	}

	srv.Stop()
	two.renderTimed(t, tree, "a", storeTimeout) // its memory tier
	two.renderTimed(t, tree, "b", missBound)    // rendered
	if n := two.renderer.renders.Load(); n != 1 {
		t.Fatalf("replica two rendered %d times with Redis down, want 1 (b only)", n)
	}
	if n := counter(t, two.reg, "gitops_render_store_errors_total"); n == 0 {
		t.Error("render store errors not counted with Redis down")
	}
	if n := counter(t, two.reg, "gitops_store_errors_total"); n == 0 {
		t.Error("Redis store errors not counted with Redis down")
	}
	if !strings.Contains(two.logs.String(), "store read failed") {
		t.Errorf("no store failure logged:\n%s", two.logs)
	}

	srv.Restart()
	// The client reconnects by itself; the first write after the restart
	// may still meet a dead pooled connection, so wait for one that lands.
	three := newReplica(t, srv.Addr)
	waitFor(t, 10*time.Second, "Redis used again after its restart", func() bool {
		before := three.renderer.renders.Load()
		one.renderFresh(t, tree, "c")
		three.renderTimed(t, tree, "c", missBound)
		hit := three.renderer.renders.Load() == before
		if !hit {
			three = newReplica(t, srv.Addr) // a fresh memory tier for the next try
		}
		return hit
	})
}

// renderFresh renders app bypassing the cache (as a refresh does) and
// stores the output.
func (r *replica) renderFresh(t *testing.T, tree fstest.MapFS, app string) {
	t.Helper()
	if _, err := r.cached.Refresh(context.Background(), render.Input{FS: tree, Path: "apps/" + app, Tool: render.KindPlain}); err != nil {
		t.Fatal(err)
	}
}

// Redis freezes (its process stopped: connections are accepted, nothing is
// answered). Renders must still succeed within the store's timeouts, not
// wait for the client's own read timeouts and retries; and they work again
// once Redis thaws.
func TestRedisHungRendersStillWork(t *testing.T) {
	srv := redistest.Start(t)
	tree := appTree("a", "b", "c")
	r := newReplica(t, srv.Addr)
	r.renderTimed(t, tree, "a", missBound)

	srv.Freeze()
	r.renderTimed(t, tree, "a", storeTimeout) // its memory tier
	r.renderTimed(t, tree, "b", missBound)
	if n := counter(t, r.reg, "gitops_render_store_errors_total"); n == 0 {
		t.Error("render store errors not counted with Redis frozen")
	}
	srv.Thaw()
	other := newReplica(t, srv.Addr)
	waitFor(t, 10*time.Second, "Redis used again after it thawed", func() bool {
		before := other.renderer.renders.Load()
		r.renderFresh(t, tree, "c")
		other.renderTimed(t, tree, "c", missBound)
		hit := other.renderer.renders.Load() == before
		if !hit {
			other = newReplica(t, srv.Addr)
		}
		return hit
	})
}
