package gitops

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/source"
)

// chartArchiver is the part of a chart source that returns archives
// (source/helmrepo.Source has it).
type chartArchiver interface {
	Archive(ctx context.Context, repo source.Repository, revision string) (source.Revision, []byte, error)
}

// dependencyFetcher fetches the dependencies a chart's charts/ lacks
// through the engine's chart source: the same disk cache, the host's
// credentials for the dependency's repository, and the app project's
// sourceRepos, which apply to dependency repositories as to the app's own
// (a policy decision: a project that may not deploy from a repository may
// not pull code from it either).
type dependencyFetcher struct{ e *Engine }

// FetchDependency implements helm.DependencyFetcher.
func (f dependencyFetcher) FetchDependency(ctx context.Context, req helm.DependencyRequest) ([]byte, error) {
	name := fmt.Sprintf("dependency %s %s from %s", req.Name, req.Version, source.RedactURL(req.Repository))
	if req.Allowed != nil && !project.SourcePermitted(req.Allowed, req.Repository) {
		return nil, &PolicyError{Rule: "sourceRepos", Subject: "chart " + name, Reason: "the dependency's repository is not among the project's source repositories"}
	}
	s, err := f.e.chartSource()
	if err != nil {
		return nil, err
	}
	a, ok := s.(chartArchiver)
	if !ok {
		return nil, fmt.Errorf("%s: Options.ChartSource cannot fetch chart archives (it has no Archive method)", name)
	}
	repo := source.Repository{URL: req.Repository, Chart: req.Name}
	if f.e.opts.Credentials != nil {
		repo.Credentials = f.e.opts.Credentials(req.Repository)
	}
	_, data, err := a.Archive(ctx, repo, req.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}

// ChartDependencies returns the fetcher the engine's own Helm renderer
// uses for dependencies missing from a chart's charts/ (through the
// engine's chart source and credentials, under HelmSource.DependencyRepos).
// A host that replaces the Helm renderer through Options.Renderers sets it
// as its helm.Options.Dependencies to keep that behaviour.
func (e *Engine) ChartDependencies() helm.DependencyFetcher { return dependencyFetcher{e} }
