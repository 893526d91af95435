package store

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MemoryOptions configure a Memory store.
type MemoryOptions struct {
	// MaxBytes is the budget for keys plus values. Default 256 MiB. An
	// entry larger than the budget is not stored.
	MaxBytes int64
	// DefaultTTL applies when Set is given none. Default 24 h.
	DefaultTTL time.Duration
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
	// Registerer receives the store's metrics when not nil. Name tells this
	// store's metrics apart (label "store").
	Registerer prometheus.Registerer
	Name       string
}

// DefaultMemoryOptions returns a 256 MiB, 24 h store without metrics.
func DefaultMemoryOptions() MemoryOptions {
	return MemoryOptions{MaxBytes: 256 << 20, DefaultTTL: 24 * time.Hour, Name: "memory"}
}

// Memory is an in-process LRU store with a byte budget and TTLs.
type Memory struct {
	opts    MemoryOptions
	mu      sync.Mutex
	entries map[string]*list.Element
	order   *list.List // front: most recently used
	size    int64
	metrics *Metrics
}

type memEntry struct {
	key     string
	value   []byte
	expires time.Time
}

// NewMemory returns an empty Memory store.
func NewMemory(opts MemoryOptions) *Memory {
	d := DefaultMemoryOptions()
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = d.MaxBytes
	}
	if opts.DefaultTTL <= 0 {
		opts.DefaultTTL = d.DefaultTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Name == "" {
		opts.Name = d.Name
	}
	return &Memory{opts: opts, entries: map[string]*list.Element{}, order: list.New(), metrics: NewMetrics(opts.Registerer, opts.Name)}
}

func entrySize(key string, value []byte) int64 { return int64(len(key) + len(value) + 64) }

// Get implements Store.
func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.entries[key]
	if !ok {
		m.metrics.Miss()
		return nil, false, nil
	}
	e := el.Value.(*memEntry)
	if !m.opts.Now().Before(e.expires) {
		m.removeLocked(el)
		m.metrics.Miss()
		return nil, false, nil
	}
	m.order.MoveToFront(el)
	m.metrics.Hit()
	return e.value, true, nil
}

// Set implements Store.
func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = m.opts.DefaultTTL
	}
	size := entrySize(key, value)
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.entries[key]; ok {
		m.removeLocked(el)
	}
	if size > m.opts.MaxBytes {
		return nil
	}
	for m.size+size > m.opts.MaxBytes {
		m.removeLocked(m.order.Back())
		m.metrics.Evict()
	}
	m.entries[key] = m.order.PushFront(&memEntry{key: key, value: value, expires: m.opts.Now().Add(ttl)})
	m.size += size
	m.metrics.SetBytes(m.size)
	return nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.entries[key]; ok {
		m.removeLocked(el)
	}
	return nil
}

// Len returns the number of entries, expired ones included until touched.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

// Bytes returns the bytes the entries account for.
func (m *Memory) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.size
}

func (m *Memory) removeLocked(el *list.Element) {
	e := el.Value.(*memEntry)
	m.order.Remove(el)
	delete(m.entries, e.key)
	m.size -= entrySize(e.key, e.value)
	m.metrics.SetBytes(m.size)
}
