package render

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/cache/store"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// oneConfigMap renders one ConfigMap and counts its renders.
type oneConfigMap struct{ renders atomic.Int32 }

func (r *oneConfigMap) Render(context.Context, Input) ([]*unstructured.Unstructured, error) {
	r.renders.Add(1)
	return []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c"}, "data": map[string]any{"k": "v"}}}}, nil
}

func (r *oneConfigMap) Identity(Input) (Identity, error) {
	return Identity{Tool: KindPlain, Version: "test"}, nil
}

// A decoded output is kept for renders in quick succession and dropped
// DecodedTTL after its last use: an engine that stops rendering holds no
// decoded objects, and the next render of the same inputs decodes the
// stored output again (no render).
func TestDecodedOutputsExpireAfterTheirLastUse(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	r := &oneConfigMap{}
	c := Cached(r, store.NewMemory(store.DefaultMemoryOptions()), CacheOptions{Now: clock.now, DecodedTTL: time.Minute})
	in := Input{FS: fstest.MapFS{"app/cm.yaml": {Data: []byte("x")}}, Path: "app", AppName: "a", Namespace: "ns"}
	render := func(step string) {
		t.Helper()
		objs, err := c.Render(context.Background(), in)
		if err != nil || len(objs) != 1 || objs[0].GetName() != "c" {
			t.Fatalf("%s: %v %v", step, objs, err)
		}
		objs[0].SetName("changed by the caller") // the caller's own copy
	}
	render("first render")
	render("from the store")
	if c.decoded.len() != 1 {
		t.Fatalf("after a store hit %d decoded outputs are kept, want 1", c.decoded.len())
	}
	clock.advance(50 * time.Second)
	render("hit")
	clock.advance(50 * time.Second)
	c.decoded.sweep()
	if c.decoded.len() != 1 {
		t.Fatal("an output used 50 s ago was dropped; the TTL counts from the last use")
	}
	clock.advance(10 * time.Second)
	c.decoded.sweep()
	if c.decoded.len() != 0 {
		t.Fatalf("%d decoded outputs kept a minute after their last use, want 0", c.decoded.len())
	}
	render("after the sweep")
	if n := r.renders.Load(); n != 1 {
		t.Fatalf("the renderer ran %d times, want 1: the stored output serves after the decoded copy expires", n)
	}
	if c.decoded.len() != 1 {
		t.Fatal("the output decoded from the store is not kept again")
	}
	// An expired copy is never served, even before a sweep drops it.
	clock.advance(time.Minute)
	if _, ok := c.decoded.get(func() string {
		for _, k := range c.decoded.lru.Keys() {
			return k
		}
		return ""
	}()); ok {
		t.Fatal("an expired decoded output was served")
	}
}

// A sweep drops what expired, oldest first, and schedules itself for the
// oldest left; with nothing left none is scheduled.
func TestDecodedSweepReschedules(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	d := newDecodedCache(4, time.Minute, clock.now)
	obj := []*unstructured.Unstructured{{Object: map[string]any{"kind": "ConfigMap"}}}
	d.add("old", obj)
	clock.advance(40 * time.Second)
	d.add("new", obj)
	clock.advance(30 * time.Second)
	d.sweep()
	if _, ok := d.lru.Peek("old"); ok || d.len() != 1 {
		t.Fatalf("after 70 s: keys %v, want [new]", d.lru.Keys())
	}
	d.mu.Lock()
	scheduled := d.sweeping
	d.mu.Unlock()
	if !scheduled {
		t.Fatal("no sweep scheduled for the output left")
	}
	clock.advance(30 * time.Second)
	d.sweep()
	d.mu.Lock()
	scheduled = d.sweeping
	d.mu.Unlock()
	if d.len() != 0 || scheduled {
		t.Fatalf("after 100 s: %d kept, sweep scheduled %v; want 0, false", d.len(), scheduled)
	}
	if newDecodedCache(-1, time.Minute, clock.now) != nil {
		t.Fatal("a negative DecodedEntries keeps decoded outputs")
	}
}
