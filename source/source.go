package source

import (
	"context"
	"io/fs"
)

// Source resolves revisions of a repository and opens snapshots of them.
// Implementations are safe for concurrent use.
type Source interface {
	// Resolve turns a revision as a user wrote it (a branch, a tag, a ref,
	// a commit SHA, a semver constraint over tags, or "" / "HEAD" for the
	// default branch) into one exact Revision.
	Resolve(ctx context.Context, repo Repository, revision string) (Revision, error)
	// Snapshot returns a read-only tree of the repository at rev. The
	// snapshot stays readable after ctx ends; Close releases it.
	Snapshot(ctx context.Context, repo Repository, rev Revision) (Snapshot, error)
}

// Resolver is the part of a Source that resolves revisions; the Poller needs
// only this.
type Resolver interface {
	Resolve(ctx context.Context, repo Repository, revision string) (Revision, error)
}

// Snapshot is a read-only file tree at one revision.
//
// Paths are slash-separated, relative to the repository root and valid in
// the sense of fs.ValidPath ("." is the root). A Snapshot is safe for
// concurrent readers and never changes.
type Snapshot interface {
	fs.FS
	// Revision is the revision this tree belongs to.
	Revision() Revision
	// TreeHash returns a content address of the file or directory at path:
	// equal hashes mean equal content (for Git, the Git object id of the
	// tree or blob). It fails with an error wrapping fs.ErrNotExist when
	// path does not exist.
	TreeHash(path string) (string, error)
}

// Closer is implemented by snapshots that hold resources (open files, a
// handle on an object store); callers should Close a snapshot they no longer
// read. Closing is optional for correctness: an unclosed snapshot is
// reclaimed by the garbage collector.
type Closer interface {
	Close() error
}
