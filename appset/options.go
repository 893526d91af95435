package appset

import (
	"context"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/source"
)

// Repos opens the repositories git generators read.
type Repos interface {
	// Snapshot returns the tree of repoURL at revision ("" or "HEAD":
	// the default branch).
	Snapshot(ctx context.Context, repoURL, revision string) (source.Snapshot, error)
}

// Cluster is an Argo CD cluster as the clusters generator sees it: the
// fields of a cluster Secret (labelled argocd.argoproj.io/secret-type:
// cluster) or the local cluster.
type Cluster struct {
	Name        string
	Server      string
	Project     string
	Labels      map[string]string
	Annotations map[string]string
}

// Clusters lists the Argo CD cluster Secrets a clusters generator selects
// from (without the local cluster; Options.LocalCluster adds it).
type Clusters interface {
	Clusters(ctx context.Context) ([]Cluster, error)
}

// Options are what a Runner generates with. Start from DefaultOptions.
type Options struct {
	// Repos reads repositories for git generators; nil refuses them.
	Repos Repos
	// Clusters lists cluster Secrets for clusters generators; nil: none.
	Clusters Clusters
	// LocalCluster is the in-cluster destination Argo CD always knows
	// (name in-cluster, server https://kubernetes.default.svc); nil
	// leaves it out. It is selected only by a clusters generator without a
	// selector, as in Argo CD, unless a Secret describes it.
	LocalCluster *Cluster
	// SCMProviders serve scmProvider generators, by provider key
	// ("github", "gitlab", ...). None is built in.
	SCMProviders map[string]SCMProvider
	// PullRequestProviders serve pullRequest generators, by provider key.
	PullRequestProviders map[string]PullRequestProvider
	// Decisions reads the duck-typed resources of clusterDecisionResource
	// generators; nil refuses them.
	Decisions DecisionReader
	// Validate checks one generated Application manifest (the host's
	// strict loader); nil checks only its name. A failure is
	// ErrInvalidApplication.
	Validate func(app map[string]any) error
	// MaxFiles bounds the files one git files generator may match.
	// Default 10,000.
	MaxFiles int
	// MaxApplications bounds the parameter sets of one generator (and so
	// the Applications of a set). Default 50,000.
	MaxApplications int
}

// DefaultOptions returns the local cluster, 10,000 files and 50,000
// Applications.
func DefaultOptions() Options {
	return Options{
		LocalCluster:    &Cluster{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr},
		MaxFiles:        10_000,
		MaxApplications: 50_000,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.MaxFiles <= 0 {
		o.MaxFiles = d.MaxFiles
	}
	if o.MaxApplications <= 0 {
		o.MaxApplications = d.MaxApplications
	}
	return o
}
