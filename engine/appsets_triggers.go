package engine

import (
	"context"
	"slices"

	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/source"
)

// engineRepos reads git generators' repositories with the engine's
// sources and credentials.
type engineRepos struct{ e *Engine }

// Snapshot implements the repository reader the generators use.
func (r engineRepos) Snapshot(ctx context.Context, repoURL, revision string) (source.Snapshot, error) {
	s, err := r.e.sourceFor(repoURL)
	if err != nil {
		return nil, err
	}
	repo := source.Repository{URL: repoURL}
	if r.e.opts.Credentials != nil {
		repo.Credentials = r.e.opts.Credentials(repoURL)
	}
	return appset.SourceRepos{Source: s, Repository: func(string) (source.Repository, error) { return repo, nil }}.Snapshot(ctx, repoURL, revision)
}

// hintAppSets generates at once the sets whose git generators read
// repoURL.
func (e *Engine) hintAppSets(repoURL string) {
	e.mu.Lock()
	loop := e.appsets
	e.mu.Unlock()
	if loop == nil {
		return
	}
	key := source.RepositoryKey(repoURL)
	invalidated := false
	for _, st := range loop.sets {
		if slices.ContainsFunc(appset.GitRepos(st.set.Spec.Generators), func(u string) bool { return source.RepositoryKey(u) == key }) {
			if !invalidated {
				// The resolve cache must not answer with the commit
				// before the push.
				e.Invalidate(repoURL)
				invalidated = true
			}
			select {
			case st.hint <- struct{}{}:
			default:
			}
		}
	}
}
