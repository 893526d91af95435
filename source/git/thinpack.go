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

// defaultMaxThinPackBytes bounds the (inflated) size of the objects a
// thin pack may bring into memory; a larger change is fetched again as an
// ordinary pack streamed to disk.
const defaultMaxThinPackBytes = 128 << 20

// errThinPackTooLarge: the thin pack outgrew its memory budget.
var errThinPackTooLarge = errors.New("thin pack over its memory budget")

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
func storeThinPack(st *filesystem.Storage, r io.Reader, maxBytes int64) error {
	staging := &stagingStorer{ObjectStorage: memory.NewStorage().ObjectStorage, base: st, budget: maxBytes}
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
	base   storer.EncodedObjectStorer
	budget int64 // bytes left
}

// SetEncodedObject implements storer.EncodedObjectStorer within the budget.
func (s *stagingStorer) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	s.budget -= obj.Size()
	if s.budget < 0 {
		return plumbing.ZeroHash, errThinPackTooLarge
	}
	return s.ObjectStorage.SetEncodedObject(obj)
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
