package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/internal/redistest"
)

func TestRedisGetSetTTLDelete(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	r := New(client, Options{Prefix: "t:"})
	if _, ok, err := r.Get(ctx, "a"); ok || err != nil {
		t.Fatalf("empty: ok %v err %v", ok, err)
	}
	if err := r.Set(ctx, "a", []byte("hello"), time.Hour); err != nil {
		t.Fatal(err)
	}
	v, ok, err := r.Get(ctx, "a")
	if err != nil || !ok || string(v) != "hello" {
		t.Fatalf("Get = %q %v %v", v, ok, err)
	}
	ttl, err := client.TTL(ctx, "t:a").Result()
	if err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("TTL of t:a = %v (%v), want about 1h: prefix and TTL must reach Redis", ttl, err)
	}
	if err := r.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := r.Get(ctx, "a"); ok {
		t.Fatal("deleted key found")
	}
}

func TestRedisDownIsAMissAndAnErrorMetric(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer client.Close()
	reg := prometheus.NewRegistry()
	r := New(client, Options{Registerer: reg, Timeout: 300 * time.Millisecond})
	if err := r.Set(ctx, "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	v, ok, err := r.Get(ctx, "k")
	if ok || v != nil {
		t.Fatalf("Get with Redis down = %q, %v; want a miss", v, ok)
	}
	if err == nil {
		t.Fatal("Get with Redis down returned no error for the caller to log")
	}
	errorsMetric := func() float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "gitops_store_errors_total" {
				return mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		return 0
	}
	if got := errorsMetric(); got != 1 {
		t.Fatalf("errors metric = %v, want 1", got)
	}
	if err := r.Set(ctx, "k", []byte("v"), 0); err == nil {
		t.Fatal("Set with Redis down returned no error")
	}
	if got := errorsMetric(); got != 2 {
		t.Fatalf("errors metric = %v, want 2", got)
	}
}

func TestTieredFillsNearFromFar(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	far := New(client, Options{})
	near := store.NewMemory(store.MemoryOptions{})
	if err := far.Set(ctx, "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	tier := store.Tiered{Near: near, Far: far}
	if v, ok, err := tier.Get(ctx, "k"); !ok || err != nil || string(v) != "v" {
		t.Fatalf("Tiered.Get = %q %v %v", v, ok, err)
	}
	if _, ok, _ := near.Get(ctx, "k"); !ok {
		t.Fatal("Tiered.Get did not copy the far entry into the near store")
	}
}

// A frozen Redis costs one Timeout per Cooldown: the operations after the
// first failure fail at once, and once the server answers again (after
// the cooldown) the store uses it again.
func TestRedisCoolsDownAfterAFailure(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	r := New(client, Options{Timeout: 200 * time.Millisecond, Cooldown: 400 * time.Millisecond})
	if err := r.Set(ctx, "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	srv.Freeze()
	if _, ok, err := r.Get(ctx, "k"); ok || err == nil {
		t.Fatalf("frozen: ok %v err %v", ok, err)
	}
	start := time.Now()
	for i := 0; i < 20; i++ {
		if _, _, err := r.Get(ctx, "k"); !errors.Is(err, ErrCoolingDown) {
			t.Fatalf("get %d while cooling down: %v", i, err)
		}
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("20 gets while cooling down took %v; they must not wait for the server", d)
	}
	srv.Thaw()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		v, ok, err := r.Get(ctx, "k")
		last = err
		return ok && string(v) == "v", nil
	})
	if err != nil {
		t.Fatalf("the store never used Redis again: %v", last)
	}
}
