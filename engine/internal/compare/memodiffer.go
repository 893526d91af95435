package compare

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
)

// MemoDiffer memoizes an app's comparisons: one entry per object, keyed by
// diff.MemoKey (desired's content, live's uid and resourceVersion). It
// lives in the app's entry of the Comparer's differ cache, which is rebuilt whenever the app's
// comparison options change, so the options are part of the key too. A
// refresh where nothing changed therefore diffs nothing.
//
// A hit returns the Result without its objects and patch (Desired,
// PredictedLive, Live, Patch): Compare reads only the verdict and the
// text, and keeping three normalised copies of every object of a fleet
// would cost more heap than the cache that holds the live objects. Errors
// are never memoized (a dry run may fail for a passing reason), nor are
// results compared with a deduced schema (diff.Result.Deduced): a new
// CRD's schema appears a moment after the CRD, and a verdict guessed
// before it must not outlive it.
type MemoDiffer struct {
	Differ
	mu      sync.Mutex
	entries map[resource.Key]memoEntry
	hits    uint64
}

type memoEntry struct {
	key string
	res diff.Result
}

// NewMemoDiffer returns a MemoDiffer in front of d.
func NewMemoDiffer(d Differ) *MemoDiffer {
	return &MemoDiffer{Differ: d, entries: map[resource.Key]memoEntry{}}
}

// Diff returns the memoized Result of the same inputs, else diffs and
// remembers the verdict.
func (m *MemoDiffer) Diff(ctx context.Context, desired, live *unstructured.Unstructured) (diff.Result, error) {
	key, ok := diff.MemoKey(desired, live)
	if !ok {
		return m.Differ.Diff(ctx, desired, live)
	}
	var id resource.Key
	if desired != nil {
		id = resource.KeyOf(desired)
	} else {
		id = resource.KeyOf(live)
	}
	m.mu.Lock()
	if e, hit := m.entries[id]; hit && e.key == key {
		m.hits++
		m.mu.Unlock()
		return e.res, nil
	}
	m.mu.Unlock()
	res, err := m.Differ.Diff(ctx, desired, live)
	if err != nil || res.Deduced {
		return res, err
	}
	slim := res
	slim.Desired, slim.PredictedLive, slim.Live, slim.Patch = nil, nil, nil, diff.Patch{}
	m.mu.Lock()
	m.entries[id] = memoEntry{key: key, res: slim}
	m.mu.Unlock()
	return res, nil
}

// forget drops the entries of objects not in keep (objects the app no
// longer renders), so the memo holds at most one entry per desired object.
func (m *MemoDiffer) forget(keep map[resource.Key]bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.entries {
		if !keep[k] {
			delete(m.entries, k)
		}
	}
}

// Hits is the number of comparisons answered from the memo.
func (m *MemoDiffer) Hits() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits
}
