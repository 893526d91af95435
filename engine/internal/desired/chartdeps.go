package desired

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/source"
)

// chartArchiver is the part of a chart source that returns archives
// (source/helmrepo.Source has it).
type chartArchiver interface {
	Archive(ctx context.Context, repo source.Repository, revision string) (source.Revision, []byte, error)
}

// Dependencies returns the fetcher of the dependencies a chart's charts/
// lacks, through the chart source: the same disk cache, the host's
// credentials for the dependency's repository as an app of the rendering
// app's project reads it (the Builder puts the project in the render's
// context; a render without one reads as no project), and the app project's
// sourceRepos, which apply to dependency repositories as to the app's own
// (a policy decision: a project that may not deploy from a repository may
// not pull code from it either).
func (s *Sources) Dependencies() render.DependencyFetcher { return dependencyFetcher{s} }

type dependencyFetcher struct{ s *Sources }

// FetchDependency implements render.DependencyFetcher.
func (f dependencyFetcher) FetchDependency(ctx context.Context, req render.DependencyRequest) ([]byte, error) {
	name := fmt.Sprintf("dependency %s %s from %s", req.Name, req.Version, source.RedactURL(req.Repository))
	if req.Allowed != nil && !project.SourcePermitted(req.Allowed, req.Repository) {
		return nil, &project.PolicyError{Rule: "sourceRepos", Subject: "chart " + name, Reason: "the dependency's repository is not among the project's source repositories"}
	}
	src, err := f.s.Chart()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	a, ok := src.(chartArchiver)
	if !ok {
		return nil, fmt.Errorf("%s: Options.ChartSource cannot fetch chart archives (it has no Archive method)", name)
	}
	repo := source.Repository{URL: req.Repository, Chart: req.Name, Credentials: f.s.credentials(projectFrom(ctx), req.Repository)}
	_, data, err := a.Archive(ctx, repo, req.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}

// projectKey is the context key of the project of the app being rendered.
type projectKey struct{}

// withProject returns ctx carrying the project of the app being rendered,
// for the dependency fetcher's credentials.
func withProject(ctx context.Context, project string) context.Context {
	return context.WithValue(ctx, projectKey{}, project)
}

// projectFrom returns the project withProject put in ctx, or "".
func projectFrom(ctx context.Context) string {
	p, _ := ctx.Value(projectKey{}).(string)
	return p
}
