package gitops

import (
	"context"
	"slices"
	"time"

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
		if slices.ContainsFunc(gitRepos(st.set.Spec.Generators), func(u string) bool { return source.RepositoryKey(u) == key }) {
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

// requeueAfter is the shortest requeueAfterSeconds of a set's generators
// (0: none set): the set is generated at least that often.
func requeueAfter(gens []appset.Generator) time.Duration {
	var min time.Duration
	take := func(s *int64) {
		if s != nil && *s > 0 && (min == 0 || time.Duration(*s)*time.Second < min) {
			min = time.Duration(*s) * time.Second
		}
	}
	for _, g := range gens {
		switch {
		case g.Git != nil:
			take(g.Git.RequeueAfterSeconds)
		case g.SCMProvider != nil:
			take(g.SCMProvider.RequeueAfterSeconds)
		case g.PullRequest != nil:
			take(g.PullRequest.RequeueAfterSeconds)
		case g.ClusterDecisionResource != nil:
			take(g.ClusterDecisionResource.RequeueAfterSeconds)
		case g.Matrix != nil:
			if r := requeueAfter(g.Matrix.Generators); r > 0 && (min == 0 || r < min) {
				min = r
			}
		case g.Merge != nil:
			if r := requeueAfter(g.Merge.Generators); r > 0 && (min == 0 || r < min) {
				min = r
			}
		}
	}
	return min
}

// gitRepos lists the repositories of a set's git generators, nested ones
// included.
func gitRepos(gens []appset.Generator) []string {
	var out []string
	for _, g := range gens {
		switch {
		case g.Git != nil:
			out = append(out, g.Git.RepoURL)
		case g.Matrix != nil:
			out = append(out, gitRepos(g.Matrix.Generators)...)
		case g.Merge != nil:
			out = append(out, gitRepos(g.Merge.Generators)...)
		}
	}
	return out
}
