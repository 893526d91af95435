package git

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kubegitops/gitops/source"
)

var _ source.MetadataSource = (*Source)(nil)

// RevisionMetadata returns the author, date and message of rev.Commit,
// read from the object store (fetched first when the store does not have
// it, as Snapshot does). Errors are *source.Error naming the repository
// and commit.
func (s *Source) RevisionMetadata(ctx context.Context, repo source.Repository, rev source.Revision) (source.RevisionMetadata, error) {
	e, err := parseEndpoint(repo, s.opts.Policy)
	if err != nil {
		return source.RevisionMetadata{}, wrapErr(endpoint{redacted: source.RedactURL(repo.URL)}, "metadata", rev.Commit, err)
	}
	if !isFullHash(rev.Commit) {
		return source.RevisionMetadata{}, wrapErr(e, "metadata", rev.Commit, fmt.Errorf("not a full commit id (Resolve it first): %w", source.ErrRevisionNotFound))
	}
	h := plumbing.NewHash(rev.Commit)
	store, err := s.store(e)
	if err != nil {
		return source.RevisionMetadata{}, wrapErr(e, "metadata", rev.Commit, err)
	}
	for attempt := 0; ; attempt++ {
		if g := store.current(); g.acquire() {
			if g.hasCommit(h) {
				md, err := commitMetadata(g, h)
				g.release()
				if err != nil {
					return source.RevisionMetadata{}, wrapErr(e, "metadata", rev.Commit, err)
				}
				return md, nil
			}
			g.release()
		}
		if attempt == 1 {
			return source.RevisionMetadata{}, wrapErr(e, "metadata", rev.Commit, fmt.Errorf("commit %s: %w", h, source.ErrRevisionNotFound))
		}
		if err := s.fetchShared(ctx, e, store, h); err != nil {
			return source.RevisionMetadata{}, wrapErr(e, "fetch", rev.Commit, err)
		}
	}
}

// commitMetadata decodes commit h of g, which the caller has acquired.
func commitMetadata(g *generation, h plumbing.Hash) (source.RevisionMetadata, error) {
	obj, err := g.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		return source.RevisionMetadata{}, fmt.Errorf("commit %s: %w", h, source.ErrRevisionNotFound)
	}
	c, err := decodeCommit(obj)
	if err != nil {
		return source.RevisionMetadata{}, fmt.Errorf("commit %s: %w", h, err)
	}
	return source.RevisionMetadata{Author: fmt.Sprintf("%s <%s>", c.Author.Name, c.Author.Email), Date: c.Author.When.UTC(), Message: c.Message}, nil
}
