package render

import "context"

// KnownKind reports whether k is one of the tools Detect and ToolFor
// choose (KindPlain, KindKustomize, KindHelm, KindJsonnet, KindPlugin): a
// renderer registered under any other kind would never be picked.
func KnownKind(k Kind) bool {
	switch k {
	case KindPlain, KindKustomize, KindHelm, KindJsonnet, KindPlugin:
		return true
	}
	return false
}

// DependencyFetcher fetches the archive of one chart dependency (the
// engine's, through its chart source and credentials, is handed to the
// renderers it builds; render/helm uses it).
type DependencyFetcher interface {
	// FetchDependency returns the chart archive (.tgz) of req.Name at
	// req.Version (a version or a constraint) from req.Repository, or an
	// error naming them. It must refuse a repository that req.Allowed does
	// not admit.
	FetchDependency(ctx context.Context, req DependencyRequest) ([]byte, error)
}

// DependencyRequest is one chart dependency to fetch.
type DependencyRequest struct {
	// Repository is the dependency's repository URL as Chart.yaml has it
	// ("https://charts.example.com", "oci://registry.example.com/charts").
	Repository string
	// Name and Version are the chart and the version or constraint
	// (Chart.lock's pinned version when there is one).
	Name, Version string
	// Allowed are the application's HelmSource.DependencyRepos: the
	// repository URL patterns it may fetch from, read as the project's
	// sourceRepos (project.SourcePermitted); nil admits any.
	Allowed []string
}
