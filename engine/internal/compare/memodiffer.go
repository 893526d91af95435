package compare

import (
	"context"
	"crypto/sha256"
	"hash/maphash"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
)

// MemoDiffer memoizes an app's comparisons: one entry per object, valid
// while diff.MemoKey (desired's content, live's uid and resourceVersion)
// is the same. It lives in the app's entry of the Comparer's differ cache, which is rebuilt whenever the app's
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
	mu sync.Mutex
	// entries are keyed by a hash of the object's key, not the key: its
	// strings are the decoded desired object's, and kept here they would
	// keep small objects of the render's churn alive, several per object. Two
	// objects whose keys collide evict each other's entry, never read it
	// (memoEntry.key covers the objects compared).
	entries map[uint64]memoEntry
	seed    maphash.Seed
	hits    uint64
}

// memoEntry is a kept verdict. It is small enough (64 bytes or less) for
// the map to hold it in its own slots: a whole diff.Result would be
// allocated apart, one 288-byte object per object of the fleet, in the
// size class of decoded maps' groups, where each long-lived one keeps a
// span of the cold start's decoding churn in use (BENCHMARKS.md).
type memoEntry struct {
	// key is the SHA-256 of diff.MemoKey: the key itself, a string of
	// about 110 bytes, would be one more long-lived small object per
	// object of the fleet.
	key   [sha256.Size]byte
	mode  diff.Mode
	flags memoFlags
	// more holds what few verdicts have: nil for an object in sync whose
	// result names the object as the memo does.
	more *memoMore
}

// memoFlags are a verdict's booleans.
type memoFlags uint8

const (
	memoModified memoFlags = 1 << iota
	memoTwoWay
	memoMissing
	memoExtraneous
)

// memoMore is the rest of a kept verdict.
type memoMore struct {
	// key is the Result's Key when it is not the memo's own (a desired
	// object without a namespace, which diff names with the live one's).
	key            *resource.Key
	schemaFallback string
	changes        []diff.Change
	resetIgnored   []string
	text           string
}

// keep makes the entry of res (whose objects and patch are dropped).
func keep(key [sha256.Size]byte, id resource.Key, res diff.Result) memoEntry {
	e := memoEntry{key: key, mode: res.Mode}
	if res.Modified {
		e.flags |= memoModified
	}
	if res.TwoWay {
		e.flags |= memoTwoWay
	}
	if res.Missing {
		e.flags |= memoMissing
	}
	if res.Extraneous {
		e.flags |= memoExtraneous
	}
	if res.Key != id || res.SchemaFallback != "" || len(res.Changes) > 0 || len(res.ResetIgnored) > 0 || res.Text != "" {
		e.more = &memoMore{schemaFallback: res.SchemaFallback, changes: res.Changes, resetIgnored: res.ResetIgnored, text: res.Text}
		if res.Key != id {
			k := res.Key
			e.more.key = &k
		}
	}
	return e
}

// result is the kept verdict as the Result a hit returns (no objects, no
// patch).
func (e memoEntry) result(id resource.Key) diff.Result {
	res := diff.Result{
		Key:        id,
		Mode:       e.mode,
		Modified:   e.flags&memoModified != 0,
		TwoWay:     e.flags&memoTwoWay != 0,
		Missing:    e.flags&memoMissing != 0,
		Extraneous: e.flags&memoExtraneous != 0,
	}
	if m := e.more; m != nil {
		if m.key != nil {
			res.Key = *m.key
		}
		res.SchemaFallback, res.Changes, res.ResetIgnored, res.Text = m.schemaFallback, m.changes, m.resetIgnored, m.text
	}
	return res
}

// NewMemoDiffer returns a MemoDiffer in front of d.
func NewMemoDiffer(d Differ) *MemoDiffer {
	return &MemoDiffer{Differ: d, entries: map[uint64]memoEntry{}, seed: maphash.MakeSeed()}
}

// Diff returns the memoized Result of the same inputs, else diffs and
// remembers the verdict.
func (m *MemoDiffer) Diff(ctx context.Context, desired, live *unstructured.Unstructured) (diff.Result, error) {
	memoKey, ok := diff.MemoKey(desired, live)
	if !ok {
		return m.Differ.Diff(ctx, desired, live)
	}
	key := sha256.Sum256([]byte(memoKey))
	var id resource.Key
	if desired != nil {
		id = resource.KeyOf(desired)
	} else {
		id = resource.KeyOf(live)
	}
	slot := maphash.Comparable(m.seed, id)
	m.mu.Lock()
	if e, hit := m.entries[slot]; hit && e.key == key {
		m.hits++
		m.mu.Unlock()
		return e.result(id), nil
	}
	m.mu.Unlock()
	res, err := m.Differ.Diff(ctx, desired, live)
	if err != nil || res.Deduced {
		return res, err
	}
	e := keep(key, id, res)
	m.mu.Lock()
	m.entries[slot] = e
	m.mu.Unlock()
	return res, nil
}

// forget drops the entries of objects not in keep (objects the app no
// longer renders), so the memo holds at most one entry per desired object.
func (m *MemoDiffer) forget(keep map[resource.Key]bool) {
	slots := make(map[uint64]bool, len(keep))
	for k := range keep {
		slots[maphash.Comparable(m.seed, k)] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for s := range m.entries {
		if !slots[s] {
			delete(m.entries, s)
		}
	}
}

// Hits is the number of comparisons answered from the memo.
func (m *MemoDiffer) Hits() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits
}
