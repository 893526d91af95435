package render_test

import (
	"context"
	"github.com/kubegitops/gitops/internal/redistest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/cache/store/redisstore"
	"github.com/kubegitops/gitops/render"
)

// TestCachedReplicasShareRendersThroughRedis: two engines (two
// CachedRenderers with their own memory tier) share one Redis; the second
// one's first render is a hit. Then Redis dies: renders still succeed.
func TestCachedReplicasShareRendersThroughRedis(t *testing.T) {
	srv := redistest.Start(t)
	addr, stop := srv.Addr, srv.Stop
	ctx := context.Background()
	newReplica := func(reg prometheus.Registerer) (*render.CachedRenderer, *refRenderer, *redis.Client) {
		client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		tier := store.Tiered{Near: store.NewMemory(store.MemoryOptions{}), Far: redisstore.New(client, redisstore.Options{Timeout: 300 * time.Millisecond})}
		r := &refRenderer{}
		return render.Cached(r, tier, render.CacheOptions{Registerer: reg, DecodedEntries: -1}), r, client
	}
	a, ra, ca := newReplica(nil)
	defer ca.Close()
	reg := prometheus.NewRegistry()
	b, rb, cb := newReplica(reg)
	defer cb.Close()
	in := render.Input{FS: refTree(), Path: "apps/a"}
	if _, err := a.Render(ctx, in); err != nil {
		t.Fatal(err)
	}
	objs, err := b.Render(ctx, in)
	if err != nil || len(objs) != 1 {
		t.Fatalf("replica b: %d objects, %v", len(objs), err)
	}
	if ra.renders.Load() != 1 || rb.renders.Load() != 0 {
		t.Fatalf("renders a=%d b=%d; want b served from Redis", ra.renders.Load(), rb.renders.Load())
	}
	stop()
	in.Path = "apps/b" // not in b's memory tier
	if _, err := b.Render(ctx, in); err != nil {
		t.Fatalf("render with Redis down failed: %v", err)
	}
	if rb.renders.Load() != 1 {
		t.Fatalf("renders b=%d, want 1", rb.renders.Load())
	}
	if got := testutil.ToFloat64(gatherer{reg, "gitops_render_store_errors_total", ""}); got < 1 {
		t.Fatalf("store errors = %v, want at least 1", got)
	}
}
