package git

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/internal/treefs"
)

// Local is a source.Source over a Git repository on disk (a clone, its
// working tree ignored, or a bare repository), for a CI job that has
// checked the repository out: nothing is fetched. Revisions are what `git
// rev-parse` takes (branches, remote branches such as origin/main, tags,
// commits); a branch name missing locally is also tried as origin/NAME;
// a semver constraint is the highest tag satisfying it, and the
// Repository's TagPrefix applies as Source.Resolve applies it (the same
// rules, over the local refs). The rest of the Repository passed to its
// methods is ignored. Snapshots read the
// repository's object store with the same tree reader as Source's (links
// followed inside the tree, TreeHash the Git object id). Safe for
// concurrent use.
type Local struct {
	dir  string
	mu   sync.Mutex // go-git's storage is read by one caller at a time
	repo *gogit.Repository
	// trees are the decoded trees every snapshot of the repository shares.
	trees *treefs.Trees
}

var _ source.Source = (*Local)(nil)

// OpenLocal opens the repository at dir (or a parent of it).
func OpenLocal(dir string) (*Local, error) {
	repo, err := gogit.PlainOpenWithOptions(dir, &gogit.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, fmt.Errorf("git repository %s: %w", dir, err)
	}
	return &Local{dir: dir, repo: repo, trees: treefs.NewTrees(sharedTrees)}, nil
}

// Resolve implements source.Source. With repo.TagPrefix, a version or a
// semver constraint names the prefixed tags (resolvePrefixed); otherwise
// the revision is what `git rev-parse` takes, then a semver constraint
// over the tags (highestTag). An unknown revision is an error wrapping
// source.ErrRevisionNotFound.
func (l *Local) Resolve(_ context.Context, repo source.Repository, revision string) (source.Revision, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	revision = strings.TrimSpace(revision)
	if revision == "" {
		revision = "HEAD"
	}
	if repo.TagPrefix != "" {
		t, err := l.refTable()
		if err != nil {
			return source.Revision{}, fmt.Errorf("%s: revision %q: %w", l.dir, revision, err)
		}
		if r, done, err := resolvePrefixed(t, revision, repo.TagPrefix); done {
			if err != nil {
				return source.Revision{}, fmt.Errorf("%s: %w", l.dir, err)
			}
			return r, nil
		}
	}
	h, err := l.repo.ResolveRevision(plumbing.Revision(revision))
	if err != nil && !strings.Contains(revision, "/") {
		h, err = l.repo.ResolveRevision(plumbing.Revision("origin/" + revision))
	}
	if err == nil {
		return source.Revision{Commit: h.String()}, nil
	}
	if c, cerr := semver.NewConstraint(revision); cerr == nil {
		t, err := l.refTable()
		if err != nil {
			return source.Revision{}, fmt.Errorf("%s: revision %q: %w", l.dir, revision, err)
		}
		if r, ok := highestTag(t, c, ""); ok {
			return r, nil
		}
	}
	return source.Revision{}, fmt.Errorf("%s: revision %q: %w", l.dir, revision, source.ErrRevisionNotFound)
}

// refTable is the repository's refs as an ls-remote would list them,
// annotated tags peeled to their commits, for the rules Source.Resolve
// applies. The caller holds l.mu.
func (l *Local) refTable() (refTable, error) {
	t := refTable{commits: map[string]string{}}
	refs, err := l.repo.References()
	if err != nil {
		return t, err
	}
	err = refs.ForEach(func(r *plumbing.Reference) error {
		if r.Type() != plumbing.HashReference {
			return nil
		}
		h := r.Hash()
		if tag, err := l.repo.TagObject(h); err == nil {
			c, err := tag.Commit()
			if err != nil {
				return nil // a tag of a tree or blob names no commit
			}
			h = c.Hash
		}
		t.commits[r.Name().String()] = h.String()
		return nil
	})
	return t, err
}

// Snapshot implements source.Source: the tree of rev's commit.
func (l *Local) Snapshot(_ context.Context, _ source.Repository, rev source.Revision) (source.Snapshot, error) {
	l.mu.Lock()
	c, err := l.repo.CommitObject(plumbing.NewHash(rev.Commit))
	l.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: commit %s: %w", l.dir, rev.Commit, source.ErrRevisionNotFound)
	}
	objects := &lockedObjects{mu: &l.mu, st: l.repo.Storer}
	return &localSnapshot{FS: treefs.NewShared(objects, c.TreeHash, l.trees), rev: rev}, nil
}

// localSnapshot is the tree of one commit of a Local repository.
type localSnapshot struct {
	*treefs.FS
	rev source.Revision
}

// Revision implements source.Snapshot.
func (s *localSnapshot) Revision() source.Revision { return s.rev }

// lockedObjects reads a repository's objects under the Local's lock, which
// every snapshot and Resolve share.
type lockedObjects struct {
	mu *sync.Mutex
	st storer.EncodedObjectStorer
}

// EncodedObject implements treefs.ObjectReader.
func (o *lockedObjects) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.st.EncodedObject(t, h)
}

// EncodedObjectSize implements treefs.ObjectReader.
func (o *lockedObjects) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.st.EncodedObjectSize(h)
}
