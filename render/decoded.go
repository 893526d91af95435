package render

import (
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// decodedCache keeps decoded outputs in process, so that a hit costs a
// deep copy instead of a decode: for renders in quick succession (a
// refresh and the sync it leads to, apps that share a chart, a warm
// loop). An output is dropped ttl after its last use, so an engine that
// stops rendering (a fleet whose refreshes are all memoized) holds no
// decoded objects: kept, they cost several times their JSON and each
// keeps in use a span of the small objects a burst of decoding churned
// through (BENCHMARKS.md, "Where the heap in use goes").
type decodedCache struct {
	lru *lru.Cache[string, *decodedEntry]
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	// sweeping is true while a sweep is scheduled.
	sweeping bool
}

// decodedEntry is one decoded output and when it was last used
// (UnixNano of decodedCache.now).
type decodedEntry struct {
	objs []*unstructured.Unstructured
	used atomic.Int64
}

// newDecodedCache returns a cache of size outputs, or nil when size is not
// positive.
func newDecodedCache(size int, ttl time.Duration, now func() time.Time) *decodedCache {
	if size <= 0 {
		return nil
	}
	l, _ := lru.New[string, *decodedEntry](size) // errs only for a size below one
	return &decodedCache{lru: l, ttl: ttl, now: now}
}

// get returns a copy of the output kept under key.
func (d *decodedCache) get(key string) ([]*unstructured.Unstructured, bool) {
	e, ok := d.lru.Get(key)
	if !ok {
		return nil, false
	}
	now := d.now()
	if d.expired(e, now) {
		d.lru.Remove(key)
		return nil, false
	}
	e.used.Store(now.UnixNano())
	return deepCopyObjects(e.objs), true
}

// add keeps a copy of objs under key.
func (d *decodedCache) add(key string, objs []*unstructured.Unstructured) {
	e := &decodedEntry{objs: deepCopyObjects(objs)}
	e.used.Store(d.now().UnixNano())
	d.lru.Add(key, e)
	d.schedule(d.ttl)
}

func (d *decodedCache) expired(e *decodedEntry, now time.Time) bool {
	return now.Sub(time.Unix(0, e.used.Load())) >= d.ttl
}

// schedule runs sweep after wait unless a sweep is scheduled already.
// A timer, not a goroutine: nothing is left running once the cache is
// empty.
func (d *decodedCache) schedule(wait time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sweeping {
		return
	}
	d.sweeping = true
	time.AfterFunc(wait, d.sweep)
}

// sweep drops the outputs not used for ttl, oldest first (the LRU's order
// is the order of last use), and schedules itself for the oldest left.
func (d *decodedCache) sweep() {
	d.mu.Lock()
	d.sweeping = false
	d.mu.Unlock()
	for {
		key, e, ok := d.lru.GetOldest()
		if !ok {
			return
		}
		now := d.now()
		if !d.expired(e, now) {
			d.schedule(d.ttl - now.Sub(time.Unix(0, e.used.Load())))
			return
		}
		d.lru.Remove(key)
	}
}

// len is the number of outputs kept.
func (d *decodedCache) len() int { return d.lru.Len() }
