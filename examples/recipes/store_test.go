package recipes

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/cache/store"
)

// countingStore counts what the engine asks of the store under test.
type countingStore struct {
	store.Store
	hits, misses, sets atomic.Int32
}

func (c *countingStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, ok, err := c.Store.Get(ctx, key)
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return v, ok, err
}

func (c *countingStore) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	c.sets.Add(1)
	return c.Store.Set(ctx, key, value, ttl)
}

const plainApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop}
spec:
  source: {repoURL: REPO, path: app}
  destination: {server: https://kubernetes.default.svc, namespace: shop}
`

// A second engine (a restarted process) on the same folder renders from
// the disk: the store's entries are found and nothing new is written.
func TestDiskStoreThroughEngine(t *testing.T) {
	disk := &DiskStore{Dir: t.TempDir()}
	repo := writeRepo(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n"})
	app := loadApp(t, plainApp, repo)

	first := &countingStore{Store: disk}
	objs, _, err := newEngine(t, func(o *gitops.Options) { o.RenderStore = first }).Render(context.Background(), app)
	if err != nil || len(objs) != 1 {
		t.Fatalf("first render: %d objects, %v", len(objs), err)
	}
	if first.hits.Load() != 0 || first.sets.Load() == 0 {
		t.Fatalf("first render: %d hits, %d sets; want a miss that writes", first.hits.Load(), first.sets.Load())
	}

	second := &countingStore{Store: disk}
	objs, _, err = newEngine(t, func(o *gitops.Options) { o.RenderStore = second }).Render(context.Background(), app)
	if err != nil || len(objs) != 1 || objs[0].GetName() != "settings" {
		t.Fatalf("second render: %v, %v", objs, err)
	}
	if second.hits.Load() < 2 || second.misses.Load() != 0 || second.sets.Load() != 0 {
		t.Errorf("second render: %d hits, %d misses, %d sets; want the dependency list and the output from disk, nothing written",
			second.hits.Load(), second.misses.Load(), second.sets.Load())
	}
}

// Entries expire after their TTL; Delete removes them; a missing key is a
// miss, not an error.
func TestDiskStoreTTL(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &DiskStore{Dir: t.TempDir(), Now: func() time.Time { return now }}
	if err := d.Set(ctx, "render/out/abc", []byte("v1"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := d.Get(ctx, "render/out/abc"); !ok || err != nil || string(v) != "v1" {
		t.Fatalf("Get = %q, %v, %v", v, ok, err)
	}
	now = now.Add(time.Minute)
	if _, ok, err := d.Get(ctx, "render/out/abc"); ok || err != nil {
		t.Fatalf("after the TTL: found %v, err %v; want a miss", ok, err)
	}
	if err := d.Set(ctx, "k", []byte("v2"), 0); err != nil { // 0: the store's default TTL
		t.Fatal(err)
	}
	if err := d.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := d.Get(ctx, "k"); ok || err != nil {
		t.Fatalf("after Delete: found %v, err %v", ok, err)
	}
	if err := d.Delete(ctx, "never-set"); err != nil {
		t.Fatalf("Delete of a missing key: %v", err)
	}
}
