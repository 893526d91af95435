package appset

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/dir"
)

// SourceRepos serves git generators from a source.Source (source/git for
// a Git server, source/dir for folders): Resolve, then Snapshot.
type SourceRepos struct {
	// Source resolves and reads the repositories.
	Source source.Source
	// Repository turns a generator's repoURL into the Repository to read
	// (credentials, a folder for a URL); nil uses the URL as it is.
	Repository func(repoURL string) (source.Repository, error)
}

// Snapshot resolves revision and opens the tree.
func (s SourceRepos) Snapshot(ctx context.Context, repoURL, revision string) (source.Snapshot, error) {
	repo := source.Repository{URL: repoURL}
	if s.Repository != nil {
		var err error
		if repo, err = s.Repository(repoURL); err != nil {
			return nil, err
		}
	}
	rev, err := s.Source.Resolve(ctx, repo, revision)
	if err != nil {
		return nil, err
	}
	return s.Source.Snapshot(ctx, repo, rev)
}

// DirRepos serves git generators from local folders, by repoURL (the
// offline mode of `gitopsctl appset generate --repo-dir URL=DIR`). The
// revision must be "", "HEAD" or the generator's targetRevision as
// written: a folder has one revision, so any branch name reads it.
func DirRepos(folders map[string]string) Repos {
	src := dir.New(dir.DefaultOptions())
	return SourceRepos{Source: anyRevision{src}, Repository: func(url string) (source.Repository, error) {
		d, ok := folders[url]
		if !ok {
			return source.Repository{}, fmt.Errorf("no folder given for repository %s", source.RedactURL(url))
		}
		return source.Repository{URL: d}, nil
	}}
}

// anyRevision reads a folder whatever revision is asked (a folder has
// only its current content).
type anyRevision struct{ source.Source }

// Resolve implements the Source interface: any revision.
func (a anyRevision) Resolve(ctx context.Context, repo source.Repository, _ string) (source.Revision, error) {
	return a.Source.Resolve(ctx, repo, "")
}
