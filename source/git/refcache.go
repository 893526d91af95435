package git

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"golang.org/x/sync/singleflight"
)

// refCache keeps the refs each repository advertised, for ResolveTTL, and
// makes concurrent lookups of one repository share one ls-remote.
type refCache struct {
	ttl   time.Duration
	now   func() time.Time
	group singleflight.Group

	mu      sync.Mutex
	entries map[string]refEntry
}

type refEntry struct {
	table   refTable
	fetched time.Time
	// repoKey is the source.RepositoryKey of the repository, shared by
	// the entries of every identity that listed it.
	repoKey string
}

func newRefCache(ttl time.Duration) *refCache {
	return &refCache{ttl: ttl, now: time.Now, entries: map[string]refEntry{}}
}

// get returns the cached table for key, or runs list once for all
// concurrent callers. list runs detached from any one caller's context
// (it is bounded by its own timeout), so a caller that gives up does not
// fail the others; each caller still returns as soon as its own ctx ends.
func (c *refCache) get(ctx context.Context, key, repoKey string, list func(context.Context) (refTable, error)) (refTable, error) {
	if t, ok := c.lookup(key); ok {
		return t, nil
	}
	ch := c.group.DoChan(key, func() (any, error) {
		if t, ok := c.lookup(key); ok {
			return t, nil
		}
		t, err := list(context.WithoutCancel(ctx))
		if err != nil {
			return refTable{}, err
		}
		if c.ttl > 0 {
			c.mu.Lock()
			c.entries[key] = refEntry{table: t, fetched: c.now(), repoKey: repoKey}
			c.mu.Unlock()
		}
		return t, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return refTable{}, r.Err
		}
		return r.Val.(refTable), nil
	case <-ctx.Done():
		return refTable{}, ctx.Err()
	}
}

func (c *refCache) lookup(key string) (refTable, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || c.ttl <= 0 || c.now().Sub(e.fetched) >= c.ttl {
		return refTable{}, false
	}
	return e.table, true
}

// invalidate drops the cached refs of a repository under every identity
// (a webhook said they changed).
func (c *refCache) invalidate(repoKey string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if e.repoKey == repoKey {
			delete(c.entries, k)
		}
	}
}

// tableFromAdv turns an advertisement into a refTable, peeling annotated
// tags to the commits they point to.
func tableFromAdv(ar *packp.AdvRefs) refTable {
	t := refTable{commits: make(map[string]string, len(ar.References)), tagObjects: map[string]string{}}
	for name, h := range ar.References {
		if p, ok := ar.Peeled[name]; ok {
			t.tagObjects[name] = h.String()
			h = p
		}
		t.commits[name] = h.String()
	}
	if ar.Head != nil {
		t.head = ar.Head.String()
	}
	for _, v := range ar.Capabilities.Get(capability.SymRef) {
		if target, ok := strings.CutPrefix(v, "HEAD:"); ok {
			t.headRef = target
		}
	}
	if t.headRef == "" && t.head != "" {
		// Without a symref capability, HEAD's branch is the one branch
		// with the same commit, when there is exactly one.
		var match []string
		for name, c := range t.commits {
			if c == t.head && strings.HasPrefix(name, "refs/heads/") {
				match = append(match, name)
			}
		}
		if len(match) == 1 {
			t.headRef = match[0]
		}
	}
	return t
}
