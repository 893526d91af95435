package appset

import (
	"context"
	"net/http"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/source"
	corev1 "k8s.io/api/core/v1"
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
	// Name is the cluster's name.
	Name string
	// Server is the cluster's API server URL.
	Server string
	// Project is the cluster's project, empty when none.
	Project string
	// Labels are the cluster Secret's labels.
	Labels map[string]string
	// Annotations are the cluster Secret's annotations.
	Annotations map[string]string
}

// Clusters lists the Argo CD cluster Secrets a clusters generator selects
// from (without the local cluster; Options.LocalCluster adds it). A
// *ClustersError returned with the list names Secrets that could not be
// read: the others are generated for, and the set reports the error.
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
	// InClusterEnabled, when set, is asked at each generation whether
	// the local cluster exists (Argo CD's argocd-cm
	// cluster.inClusterEnabled: "false" turns it off); nil: it does.
	InClusterEnabled func(ctx context.Context) (bool, error)
	// SCMProviders serve scmProvider generators, by provider key
	// ("github", "gitlab", "gitea", "bitbucket", "bitbucketServer",
	// "azureDevOps"); package appset/scm/all returns Argo CD's.
	SCMProviders map[string]SCMProvider
	// PullRequestProviders serve pullRequest generators, by provider key.
	PullRequestProviders map[string]PullRequestProvider
	// SCM is what scmProvider and pullRequest generators may reach.
	SCM SCMPolicy
	// Objects reads the ConfigMaps and Secrets plugin generators name;
	// nil refuses plugin generators (ErrNoProvider).
	Objects Objects
	// ControllerNamespace is where plugin ConfigMaps and their token
	// Secrets are read (Argo CD's namespace). Default "argocd".
	ControllerNamespace string
	// HTTPClient calls plugin services; nil: http.DefaultClient. Each
	// request is bounded by the plugin's requestTimeout.
	HTTPClient *http.Client
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

// Objects reads ConfigMaps and Secrets of a cluster.
type Objects interface {
	// ConfigMap returns the data of a ConfigMap.
	ConfigMap(ctx context.Context, namespace, name string) (map[string]string, error)
	// Secret returns a Secret (its labels matter to tokenRef checks).
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// DefaultOptions returns the local cluster, the namespace "argocd",
// 10,000 files and 50,000 Applications.
func DefaultOptions() Options {
	return Options{
		LocalCluster:        &Cluster{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr},
		ControllerNamespace: "argocd",
		MaxFiles:            10_000,
		MaxApplications:     50_000,
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
	if o.ControllerNamespace == "" {
		o.ControllerNamespace = d.ControllerNamespace
	}
	return o
}
