package git

import (
	"fmt"
	"runtime"
	"sync"

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
//
// When the repository's credentials set EnableLFS, a file that is a Git
// LFS pointer reads as the object it points to (fetched when the snapshot
// is opened, see LFSOptions), and TreeHash returns the Git id prefixed
// with "lfs:", so that caches keyed by it never mix the content of a
// snapshot with LFS and one without.
type Snapshot struct {
	*treefs.FS
	rev source.Revision
	rel *releaser
	lfs bool
}

// TreeHash implements source.Snapshot (see Snapshot for LFS).
func (s *Snapshot) TreeHash(name string) (string, error) {
	h, err := s.FS.TreeHash(name)
	if err != nil || !s.lfs {
		return h, err
	}
	return "lfs:" + h, nil
}

var _ source.Snapshot = (*Snapshot)(nil)

// openSnapshot opens commit h in generation g, which the caller has
// acquired; the snapshot releases it on Close or when collected.
// trees are the decoded trees every snapshot of the source shares.
func openSnapshot(g *generation, h plumbing.Hash, rev source.Revision, trees *treefs.Trees) (*Snapshot, error) {
	obj, err := g.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		g.release()
		return nil, fmt.Errorf("commit %s: %w", h, source.ErrRevisionNotFound)
	}
	c, err := decodeCommit(obj)
	if err != nil {
		g.release()
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	s := &Snapshot{FS: treefs.NewShared(g, c.TreeHash, trees), rev: rev, rel: &releaser{gen: g}}
	runtime.AddCleanup(s, func(r *releaser) { r.release() }, s.rel)
	return s, nil
}

// releaser lets go of a snapshot's generation exactly once.
type releaser struct {
	once sync.Once
	gen  *generation
}

func (r *releaser) release() { r.once.Do(r.gen.release) }

// Revision implements source.Snapshot.
func (s *Snapshot) Revision() source.Revision { return s.rev }

// Close implements source.Closer: the snapshot stops holding its object
// store generation, which may then be deleted if a newer one replaced it.
// Reading a closed snapshot may fail. An unclosed snapshot is released
// when it is garbage collected.
func (s *Snapshot) Close() error {
	s.rel.release()
	return nil
}
