package cache

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/resource"
)

// EventType says what happened to an object.
type EventType string

// Event types.
const (
	EventAdded    EventType = "Added"
	EventModified EventType = "Modified"
	EventDeleted  EventType = "Deleted"
)

// Event is a change to one cached object, delivered after Start returned.
type Event struct {
	// Type says whether the object was added, changed or deleted.
	Type EventType
	// Key names the object.
	Key resource.Key
	// App is the application tracking the object or its nearest tracked
	// owner ("" when none), so a host can refresh just that application.
	App string
	// Object is the object as cached (whole or metadata); for Deleted, the
	// last state seen. Shared: do not modify.
	Object *unstructured.Unstructured
}

// Subscribe calls fn with every change, in batches: events are gathered for
// BatchInterval and coalesced per key (Added then Modified is one Added,
// Added then Deleted is nothing, Deleted then Added is one Modified), then
// fn is called once per remaining event, in the order the keys first
// changed. All subscribers are called from one goroutine: a slow fn delays
// the others. fn must not block on the cache's writers. The returned
// function unsubscribes.
func (c *ClusterCache) Subscribe(fn func(Event)) (unsubscribe func()) {
	return c.events.subscribe(fn)
}

// batcher gathers, coalesces and delivers events.
type batcher struct {
	interval time.Duration

	mu      sync.Mutex
	pending map[resource.Key]int // index into queue
	queue   []Event
	subs    map[int]func(Event)
	nextID  int
	wake    chan struct{}
	// nsubs mirrors len(subs), so writers skip building events nobody
	// will read without taking mu.
	nsubs atomic.Int32
}

func (b *batcher) active() bool { return b.nsubs.Load() > 0 }

func newBatcher(interval time.Duration) *batcher {
	return &batcher{interval: interval, pending: map[resource.Key]int{}, subs: map[int]func(Event){}, wake: make(chan struct{}, 1)}
}

func (b *batcher) subscribe(fn func(Event)) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.nextID
	b.nextID++
	b.subs[id] = fn
	b.nsubs.Store(int32(len(b.subs)))
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			delete(b.subs, id)
			b.nsubs.Store(int32(len(b.subs)))
		})
	}
}

// add queues ev, coalescing it with a queued event of the same key.
func (b *batcher) add(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.subs) == 0 {
		return
	}
	if i, ok := b.pending[ev.Key]; ok {
		prev := b.queue[i]
		switch {
		case prev.Type == EventAdded && ev.Type == EventModified:
			ev.Type = EventAdded
		case prev.Type == EventAdded && ev.Type == EventDeleted:
			ev.Type = "" // nothing happened, as far as subscribers know
		case prev.Type == EventDeleted && ev.Type == EventAdded:
			ev.Type = EventModified
		}
		b.queue[i] = ev
	} else {
		b.pending[ev.Key] = len(b.queue)
		b.queue = append(b.queue, ev)
	}
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// run delivers a batch every interval while events arrive.
func (b *batcher) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.wake:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(b.interval):
		}
		b.flush()
	}
}

func (b *batcher) flush() {
	b.mu.Lock()
	queue := b.queue
	b.queue = nil
	b.pending = map[resource.Key]int{}
	subs := make([]func(Event), 0, len(b.subs))
	for _, fn := range b.subs {
		subs = append(subs, fn)
	}
	b.mu.Unlock()
	for _, ev := range queue {
		if ev.Type == "" {
			continue
		}
		for _, fn := range subs {
			fn(ev)
		}
	}
}

// StatusOnlyUpdate is a SkipUpdate that drops updates of tracked objects
// that change nothing but status, metadata.resourceVersion or
// metadata.managedFields: the changes a controller makes on its own, which
// need no refresh of the application.
func StatusOnlyUpdate(old, cur *unstructured.Unstructured) bool {
	return onlyStatusChanged(old.Object, cur.Object)
}

// onlyStatusChanged reports whether two versions of an object differ only in
// status, metadata.resourceVersion or metadata.managedFields.
func onlyStatusChanged(old, cur map[string]any) bool {
	for k, v := range cur {
		if k == "status" || k == "metadata" {
			continue
		}
		if !reflect.DeepEqual(v, old[k]) {
			return false
		}
	}
	for k := range old {
		if _, ok := cur[k]; !ok && k != "status" && k != "metadata" {
			return false
		}
	}
	om, _ := old["metadata"].(map[string]any)
	cm, _ := cur["metadata"].(map[string]any)
	ignored := func(k string) bool { return k == "resourceVersion" || k == "managedFields" }
	for k, v := range cm {
		if !ignored(k) && !reflect.DeepEqual(v, om[k]) {
			return false
		}
	}
	for k := range om {
		if _, ok := cm[k]; !ok && !ignored(k) {
			return false
		}
	}
	return true
}
