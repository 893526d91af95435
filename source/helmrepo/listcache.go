package helmrepo

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// listCache keeps what a repository lists (a parsed index, or an OCI
// repository's tags) for ttl per key, and makes concurrent lookups of one
// key share one request. The request runs detached from any one caller's
// context (it has its own timeout), so a caller that gives up does not fail
// the others.
type listCache struct {
	ttl   time.Duration
	now   func() time.Time
	group singleflight.Group

	mu      sync.Mutex
	entries map[string]listEntry
}

type listEntry struct {
	value   any
	fetched time.Time
}

func newListCache(ttl time.Duration) *listCache {
	return &listCache{ttl: ttl, now: time.Now, entries: map[string]listEntry{}}
}

func (c *listCache) get(ctx context.Context, key string, list func(context.Context) (any, error)) (any, error) {
	if v, ok := c.lookup(key); ok {
		return v, nil
	}
	ch := c.group.DoChan(key, func() (any, error) {
		if v, ok := c.lookup(key); ok {
			return v, nil
		}
		v, err := list(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		if c.ttl > 0 {
			c.mu.Lock()
			c.entries[key] = listEntry{value: v, fetched: c.now()}
			c.mu.Unlock()
		}
		return v, nil
	})
	select {
	case r := <-ch:
		return r.Val, r.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *listCache) lookup(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || c.ttl <= 0 || c.now().Sub(e.fetched) >= c.ttl {
		return nil, false
	}
	return e.value, true
}

// drop forgets key, so that the next get lists again.
func (c *listCache) drop(key string) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}

// dropMatching forgets every key match admits.
func (c *listCache) dropMatching(match func(string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if match(k) {
			delete(c.entries, k)
		}
	}
}
