package git

import (
	"errors"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
)

// deltaWindow is how many objects the encoder compares when it looks for
// delta bases while rewriting a thin pack.
const deltaWindow = 10

// storeThinPack stores a thin pack: one whose deltas may lean on objects
// the store already has, which is what a server sends when told our haves
// (an incremental fetch then costs what changed, not the whole tree). go-git
// cannot read a thin pack from disk, so the pack is parsed into memory,
// resolving outside bases from the store, and written back as a
// self-contained pack. Memory holds only the new objects, and thin packs
// are asked for only when there are haves.
func storeThinPack(st *filesystem.Storage, r io.Reader) error {
	staging := &stagingStorer{ObjectStorage: memory.NewStorage().ObjectStorage, base: st}
	parser, err := packfile.NewParserWithStorage(packfile.NewScanner(r), staging)
	if err != nil {
		return err
	}
	if _, err := parser.Parse(); err != nil {
		return err
	}
	if len(staging.Objects) == 0 {
		return nil
	}
	hashes := make([]plumbing.Hash, 0, len(staging.Objects))
	for h := range staging.Objects {
		hashes = append(hashes, h)
	}
	w, err := st.PackfileWriter()
	if err != nil {
		return err
	}
	if _, err := packfile.NewEncoder(w, staging, false).Encode(hashes, deltaWindow); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

// stagingStorer keeps new objects in memory and reads missing ones (the
// bases of a thin pack's deltas) from the store.
type stagingStorer struct {
	memory.ObjectStorage
	base storer.EncodedObjectStorer
}

// EncodedObject implements storer.EncodedObjectStorer.
func (s *stagingStorer) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := s.ObjectStorage.EncodedObject(t, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return s.base.EncodedObject(t, h)
	}
	return obj, err
}

// HasEncodedObject implements storer.EncodedObjectStorer.
func (s *stagingStorer) HasEncodedObject(h plumbing.Hash) error {
	if err := s.ObjectStorage.HasEncodedObject(h); err == nil {
		return nil
	}
	return s.base.HasEncodedObject(h)
}

// EncodedObjectSize implements storer.EncodedObjectStorer.
func (s *stagingStorer) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if n, err := s.ObjectStorage.EncodedObjectSize(h); err == nil {
		return n, nil
	}
	return s.base.EncodedObjectSize(h)
}
