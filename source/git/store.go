package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// defaultMaxPacks is the number of packs (one per incremental fetch) after
// which a store starts a new generation.
const defaultMaxPacks = 64

// objectStore holds every object fetched from one repository (for one set
// of credentials); all revisions share it. Objects live in the current
// generation, a bare repository under base/gen-N. Each fetch adds one
// small pack; when a generation holds maxPacks packs, the next fetch starts
// a new generation (one full depth-1 fetch) and the old one is deleted once
// no open snapshot reads it. This bounds the packs a reader indexes and the
// disk a long-running process uses.
//
// Fetches are serialised by sem (one in flight per store) and write
// through their own handle; reads never take sem.
type objectStore struct {
	base     string
	maxPacks int
	// sem is a one-slot semaphore held across one fetch; acquiring it
	// honours the caller's context, so a hung fetch blocks no one beyond
	// their own deadline.
	sem chan struct{}

	mu  sync.Mutex // guards cur
	cur *generation

	initOnce sync.Once
	initErr  error
}

func newObjectStore(base string, maxPacks int) *objectStore {
	if maxPacks <= 0 {
		maxPacks = defaultMaxPacks
	}
	return &objectStore{base: base, maxPacks: maxPacks, sem: make(chan struct{}, 1)}
}

// init opens the newest generation (removing older ones a previous
// process left: a cache directory belongs to one process at a time), or
// creates the first.
func (o *objectStore) init() error {
	o.initOnce.Do(func() {
		if err := os.MkdirAll(o.base, 0o700); err != nil {
			o.initErr = err
			return
		}
		entries, err := os.ReadDir(o.base)
		if err != nil {
			o.initErr = err
			return
		}
		var gens []int
		for _, e := range entries {
			if n, ok := strings.CutPrefix(e.Name(), "gen-"); ok && e.IsDir() {
				if i, err := strconv.Atoi(n); err == nil {
					gens = append(gens, i)
				}
			}
		}
		sort.Ints(gens)
		next := 1
		if len(gens) > 0 {
			next = gens[len(gens)-1]
			for _, old := range gens[:len(gens)-1] {
				_ = os.RemoveAll(o.genDir(old))
			}
		}
		o.cur, o.initErr = o.openGeneration(next)
	})
	return o.initErr
}

func (o *objectStore) genDir(n int) string { return filepath.Join(o.base, fmt.Sprintf("gen-%d", n)) }

func (o *objectStore) openGeneration(n int) (*generation, error) {
	g := &generation{n: n, dir: o.genDir(n)}
	if _, err := os.Stat(filepath.Join(g.dir, "objects")); err != nil {
		if err := os.MkdirAll(g.dir, 0o700); err != nil {
			return nil, err
		}
		if _, err := gogit.PlainInit(g.dir, true); err != nil && !errors.Is(err, gogit.ErrRepositoryAlreadyExists) {
			return nil, err
		}
	}
	packs, err := filepath.Glob(filepath.Join(g.dir, "objects", "pack", "pack-*.pack"))
	if err != nil {
		return nil, err
	}
	g.packs = len(packs)
	return g, nil
}

// current returns the generation new snapshots and fetches use.
func (o *objectStore) current() *generation {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cur
}

// hasCommit reports whether the current generation holds the commit and
// its root tree.
func (o *objectStore) hasCommit(h plumbing.Hash) bool { return o.current().hasCommit(h) }

// lock takes the fetch slot, or fails when ctx ends first.
func (o *objectStore) lock(ctx context.Context) error {
	select {
	case o.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (o *objectStore) unlock() { <-o.sem }

// rotateIfFull starts a new generation when the current one holds
// maxPacks packs. The caller holds the fetch slot.
func (o *objectStore) rotateIfFull() error {
	old := o.current()
	if old.packs < o.maxPacks {
		return nil
	}
	g, err := o.openGeneration(old.n + 1)
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.cur = g
	o.mu.Unlock()
	old.retire()
	return nil
}

// close releases the open files of the current generation.
func (o *objectStore) close() {
	if g := o.current(); g != nil {
		g.closeReader()
	}
}

// generation is one bare repository of a store. All snapshots of it read
// through one shared handle (reader), whose pack indexes are loaded once
// and reloaded after each fetch, so opening a snapshot costs nothing however
// many packs it holds. readMu serialises use of reader (go-git's storage is
// not safe for concurrent use) for one object decode at a time.
type generation struct {
	n   int
	dir string
	// packs counts the packs written; changed only under the fetch slot.
	packs int

	readMu sync.Mutex
	reader *filesystem.Storage
	// present are commits found whole in this generation (under readMu):
	// its objects are only ever added, so a commit once present stays
	// present, and a snapshot of it need not read the object store again
	// (checking it on every refresh was 8% of a 10,000-app fleet's steady
	// CPU). Cleared when it reaches maxPresent.
	present map[plumbing.Hash]struct{}

	refMu   sync.Mutex
	live    int  // open snapshots
	retired bool // a newer generation took over
	removed bool
}

// maxOpenPacks bounds the pack files a reader keeps open.
const maxOpenPacks = 32

// openWriter returns a handle for one fetch.
func (g *generation) openWriter() *filesystem.Storage {
	return filesystem.NewStorageWithOptions(osfs.New(g.dir), cache.NewObjectLRU(cache.MiByte), filesystem.Options{})
}

// read runs f with the shared read handle to itself.
func (g *generation) read(f func(st *filesystem.Storage)) {
	g.readMu.Lock()
	defer g.readMu.Unlock()
	if g.reader == nil {
		g.reader = filesystem.NewStorageWithOptions(osfs.New(g.dir), cache.NewObjectLRU(16*cache.MiByte),
			filesystem.Options{MaxOpenDescriptors: maxOpenPacks})
	}
	f(g.reader)
}

// reindex makes the reader see the packs written since it loaded its
// indexes.
func (g *generation) reindex() { g.read(func(st *filesystem.Storage) { st.Reindex() }) }

func (g *generation) closeReader() {
	g.readMu.Lock()
	defer g.readMu.Unlock()
	if g.reader != nil {
		_ = g.reader.Close()
		g.reader = nil
	}
}

func (g *generation) hasCommit(h plumbing.Hash) bool {
	var ok bool
	g.read(func(st *filesystem.Storage) {
		if _, ok = g.present[h]; ok {
			return
		}
		if ok = commitPresent(st, h); ok {
			if g.present == nil || len(g.present) >= maxPresent {
				g.present = map[plumbing.Hash]struct{}{}
			}
			g.present[h] = struct{}{}
		}
	})
	return ok
}

// maxPresent bounds a generation's memo of present commits.
const maxPresent = 4096

// EncodedObject implements treefs.ObjectReader over the shared reader.
func (g *generation) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (obj plumbing.EncodedObject, err error) {
	g.read(func(st *filesystem.Storage) { obj, err = st.EncodedObject(t, h) })
	return obj, err
}

// EncodedObjectSize implements treefs.ObjectReader over the shared reader.
func (g *generation) EncodedObjectSize(h plumbing.Hash) (n int64, err error) {
	g.read(func(st *filesystem.Storage) { n, err = st.EncodedObjectSize(h) })
	return n, err
}

// acquire registers an open snapshot; it fails once the generation has
// been removed.
func (g *generation) acquire() bool {
	g.refMu.Lock()
	defer g.refMu.Unlock()
	if g.removed {
		return false
	}
	g.live++
	return true
}

// release unregisters a snapshot and removes a retired generation nobody
// reads any more.
func (g *generation) release() {
	g.refMu.Lock()
	g.live--
	remove := g.retired && g.live == 0 && !g.removed
	if remove {
		g.removed = true
	}
	g.refMu.Unlock()
	if remove {
		g.remove()
	}
}

func (g *generation) retire() {
	g.refMu.Lock()
	g.retired = true
	remove := g.live == 0 && !g.removed
	if remove {
		g.removed = true
	}
	g.refMu.Unlock()
	if remove {
		g.remove()
	}
}

func (g *generation) remove() {
	g.closeReader()
	_ = os.RemoveAll(g.dir)
}

func commitPresent(st *filesystem.Storage, h plumbing.Hash) bool {
	obj, err := st.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		return false
	}
	c, err := decodeCommit(obj)
	if err != nil {
		return false
	}
	return st.HasEncodedObject(c.TreeHash) == nil
}
