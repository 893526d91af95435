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
// share it. Fetches are serialised by sem (one in flight per store); reads
// never take it: each snapshot opens its own read handle on the directory,
// which sees every pack completed before it was opened (go-git writes a
// pack's index before it renames the pack into place).
type objectStore struct {
	dir string
	// sem is a one-slot semaphore held across one fetch; acquiring it
	// honours the caller's context, so a hung fetch blocks no one beyond
	// their own deadline.
	sem chan struct{}

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

// openReader returns a fresh read handle. keepFDs keeps pack files open
// until Close, which makes reading many objects cheap.
func (o *objectStore) openReader(keepFDs bool) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(osfs.New(o.dir), cache.NewObjectLRU(8*cache.MiByte),
		filesystem.Options{KeepDescriptors: keepFDs})
}

// hasCommit reports whether the commit and its root tree are present.
func (o *objectStore) hasCommit(h plumbing.Hash) bool {
	st := o.openReader(false)
	defer st.Close()
	return commitPresent(st, h)
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

func mustHash(s string) plumbing.Hash { return plumbing.NewHash(s) }
