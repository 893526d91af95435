package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// objectStore is the on-disk bare repository that holds every object
// fetched from one repository (for one set of credentials). All revisions
// share it. Fetches are serialised by sem (one in flight per store) and
// write through their own handle; reads never take sem. All snapshots read
// through one shared handle (reader), whose pack indexes are loaded once
// and reloaded after each fetch, so opening a snapshot costs nothing however
// many packs the store holds. readMu serialises use of reader (go-git's
// storage is not safe for concurrent use) for one object decode at a time,
// never across network I/O.
type objectStore struct {
	dir string
	// sem is a one-slot semaphore held across one fetch; acquiring it
	// honours the caller's context, so a hung fetch blocks no one beyond
	// their own deadline.
	sem chan struct{}

	readMu sync.Mutex
	reader *filesystem.Storage

	initOnce sync.Once
	initErr  error
}

func newObjectStore(dir string) *objectStore {
	return &objectStore{dir: dir, sem: make(chan struct{}, 1)}
}

// init creates the bare repository on first use.
func (o *objectStore) init() error {
	o.initOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(o.dir, "objects")); err == nil {
			return
		}
		if err := os.MkdirAll(o.dir, 0o700); err != nil {
			o.initErr = err
			return
		}
		_, err := gogit.PlainInit(o.dir, true)
		if err != nil && !errors.Is(err, gogit.ErrRepositoryAlreadyExists) {
			o.initErr = err
		}
	})
	return o.initErr
}

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

// maxOpenPacks bounds the pack files the shared reader keeps open.
const maxOpenPacks = 32

// openWriter returns a handle for one fetch.
func (o *objectStore) openWriter() *filesystem.Storage {
	return filesystem.NewStorageWithOptions(osfs.New(o.dir), cache.NewObjectLRU(cache.MiByte), filesystem.Options{})
}

// read runs f with the shared read handle to itself.
func (o *objectStore) read(f func(st *filesystem.Storage)) {
	o.readMu.Lock()
	defer o.readMu.Unlock()
	if o.reader == nil {
		o.reader = filesystem.NewStorageWithOptions(osfs.New(o.dir), cache.NewObjectLRU(16*cache.MiByte),
			filesystem.Options{MaxOpenDescriptors: maxOpenPacks})
	}
	f(o.reader)
}

// reindex makes the shared reader see the packs written since it loaded
// its indexes.
func (o *objectStore) reindex() {
	o.read(func(st *filesystem.Storage) { st.Reindex() })
}

// close releases the shared reader's open files.
func (o *objectStore) close() {
	o.readMu.Lock()
	defer o.readMu.Unlock()
	if o.reader != nil {
		_ = o.reader.Close()
		o.reader = nil
	}
}

// hasCommit reports whether the commit and its root tree are present.
func (o *objectStore) hasCommit(h plumbing.Hash) bool {
	var ok bool
	o.read(func(st *filesystem.Storage) { ok = commitPresent(st, h) })
	return ok
}

// EncodedObject implements treefs.ObjectReader over the shared reader.
func (o *objectStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (obj plumbing.EncodedObject, err error) {
	o.read(func(st *filesystem.Storage) { obj, err = st.EncodedObject(t, h) })
	return obj, err
}

// EncodedObjectSize implements treefs.ObjectReader over the shared reader.
func (o *objectStore) EncodedObjectSize(h plumbing.Hash) (n int64, err error) {
	o.read(func(st *filesystem.Storage) { n, err = st.EncodedObjectSize(h) })
	return n, err
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
