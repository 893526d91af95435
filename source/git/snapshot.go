package git

import (
	"fmt"
	"runtime"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/internal/treefs"
)

// Snapshot is the tree of one commit read straight from the object store:
// no worktree is checked out and no lock of the repository is taken. It
// implements source.Snapshot, fs.ReadDirFS, fs.ReadFileFS, fs.StatFS and
// fs.ReadLinkFS, and is safe for concurrent readers.
//
// Symbolic links are followed by Open, Stat, ReadFile and ReadDir when their
// target stays inside the tree; ReadLink and Lstat expose them as links. A
// link with an absolute target, or whose target climbs above the root at
// any step (even if it would come back in), fails with an *fs.PathError
// wrapping source.ErrOutsideRepository. Submodules appear as empty
// directories: their content lives in other repositories and is not
// fetched, so no credential ever goes to a submodule's host.
type Snapshot struct {
	*treefs.FS
	rev source.Revision
	st  *filesystem.Storage
}

var _ source.Snapshot = (*Snapshot)(nil)

func openSnapshot(o *objectStore, h plumbing.Hash, rev source.Revision) (*Snapshot, error) {
	st := o.openReader(true)
	obj, err := st.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("commit %s: %w", h, source.ErrRevisionNotFound)
	}
	c, err := decodeCommit(obj)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	s := &Snapshot{FS: treefs.New(st, c.TreeHash), rev: rev, st: st}
	// An unclosed snapshot must not leak the pack file descriptors.
	runtime.AddCleanup(s, func(st *filesystem.Storage) { st.Close() }, st)
	return s, nil
}

// Revision implements source.Snapshot.
func (s *Snapshot) Revision() source.Revision { return s.rev }

// Close releases the pack files the snapshot holds open. A closed snapshot
// reopens them on demand, one read at a time.
func (s *Snapshot) Close() error {
	var err error
	s.Lock(func() { err = s.st.Close() })
	return err
}
