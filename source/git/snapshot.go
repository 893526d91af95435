package git

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

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
}

var _ source.Snapshot = (*Snapshot)(nil)

func openSnapshot(o *objectStore, h plumbing.Hash, rev source.Revision) (*Snapshot, error) {
	obj, err := o.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, source.ErrRevisionNotFound)
	}
	c, err := decodeCommit(obj)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	return &Snapshot{FS: treefs.New(o, c.TreeHash), rev: rev}, nil
}

// Revision implements source.Snapshot.
func (s *Snapshot) Revision() source.Revision { return s.rev }

// Close implements source.Closer. Snapshots share their repository's read
// handle, so there is nothing to release; Close exists so callers can
// treat every snapshot alike.
func (s *Snapshot) Close() error { return nil }
