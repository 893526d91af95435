package preview

import (
	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/source"
)

// Options say what to preview. Start from DefaultOptions.
type Options struct {
	// Source reads the previewed repository (source/git's Source for a Git
	// server, its Local for a clone on disk). Required.
	Source source.Source
	// Repository is where Source reads it from (URL, credentials).
	Repository source.Repository
	// RepoURL is the URL the Applications name the repository by; empty
	// means Repository.URL. Sources of other repositories are rendered at
	// their own targetRevision on both sides.
	RepoURL string
	// Base and Head are the two revisions compared (branches, tags or
	// commits). Required.
	Base, Head string
	// Branch is the branch the change is made to (a pull request's
	// target), when Base is a commit: sources of the repository whose
	// targetRevision is this branch, the base as written, "", "HEAD", or
	// any revision that resolves to the base commit are rendered at each
	// side's commit; other sources of the repository (a tag, another
	// branch) at their own revision on both sides.
	Branch string
	// Apps are files or folders of Application, ApplicationSet and
	// AppProject manifests. A relative path that exists in the
	// repository is read from each side's tree (so a change to the app
	// files is previewed too); any other path is read from disk, the same
	// for both sides. Folders are read one level deep (*.yaml, *.yml,
	// *.json). Required.
	Apps []string
	// Projects are AppProjects apps may name, besides those in Apps.
	Projects []gitops.Project
	// Policies run on every object of the head render of each changed or
	// added app, after its project's rules (CELPolicy is one).
	Policies []gitops.Policy
	// KubeVersion and APIVersions describe the target cluster to the
	// renderers (Helm's .Capabilities).
	KubeVersion string
	APIVersions []string
	// Credentials returns the credentials of other repositories.
	Credentials func(repoURL string) *source.Credentials
	// ChartSource reads Helm chart sources; nil: the engine's default.
	ChartSource source.Source
	// Renderers replace built-in tools (counted like them).
	Renderers map[render.Kind]render.Renderer
	// AppSetClusters serve clusters generators; the local cluster is
	// always known.
	AppSetClusters appset.Clusters
	// Parallelism bounds the renders that run at once. Default 4.
	Parallelism int
	// MaxDepth bounds app-of-apps nesting. Default 5.
	MaxDepth int
	// Live, when set, compares each changed or added app's head render
	// with this cluster through the engine's own refresh (its diff,
	// ignore rules and normalisation), prunes included.
	Live *LiveOptions
	// Log receives the engines' logs.
	Log logr.Logger
}

// LiveOptions configure the live comparison.
type LiveOptions struct {
	// Clusters are the destinations the apps name (see
	// gitops.ClustersFromKubeconfig). Required.
	Clusters []gitops.ClusterConfig
	// Config, when set, is also known as the local cluster
	// (https://kubernetes.default.svc, in-cluster) unless Clusters
	// already names it.
	Config *rest.Config
}

// DefaultOptions returns a parallelism of 4 and a depth of 5.
func DefaultOptions() Options {
	return Options{Parallelism: 4, MaxDepth: 5, Log: logr.Discard()}
}
