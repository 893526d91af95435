package render_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/render"
)

// startRedis runs a real redis-server on a free loopback port for the test.
func startRedis(t *testing.T) (addr string, stop func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not installed (apt-get install -y redis-server): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Ping(ctx).Err() == nil, nil
	}); err != nil {
		t.Fatalf("redis-server on %s: %v", addr, err)
	}
	return addr, stop
}

// TestCachedReplicasShareRendersThroughRedis: two engines (two
// CachedRenderers with their own memory tier) share one Redis; the second
// one's first render is a hit. Then Redis dies: renders still succeed.
func TestCachedReplicasShareRendersThroughRedis(t *testing.T) {
	addr, stop := startRedis(t)
	ctx := context.Background()
	newReplica := func(reg prometheus.Registerer) (*render.CachedRenderer, *refRenderer, *redis.Client) {
		client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		tier := store.Tiered{Near: store.NewMemory(store.MemoryOptions{}), Far: store.NewRedis(client, store.RedisOptions{Timeout: 300 * time.Millisecond})}
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
