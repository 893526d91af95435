package engine

import (
	"context"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/sync"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// ClusterCache is what the engine needs of a cluster's live-state cache
// (cache.Interface); *cache.ClusterCache is the default
// (Options.NewClusterCache).
type ClusterCache = cache.Interface

// Differ compares one desired object with its live object; *diff.Differ is
// the default (Options.NewDiffer).
type Differ interface {
	Diff(ctx context.Context, desired, live *unstructured.Unstructured) (diff.Result, error)
	// KeepIgnored returns desired with the fields the app's ignore rules
	// cover set to their live values: what a sync with
	// RespectIgnoreDifferences=true applies (sync.Request.KeepIgnored).
	KeepIgnored(ctx context.Context, desired, live *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// Syncer runs sync operations against one cluster (sync.Interface);
// *sync.Syncer is the default (Options.NewSyncer).
type Syncer = sync.Interface

func defaultNewClusterCache(cfg *rest.Config, opts cache.Options, with cache.Collaborators) (ClusterCache, error) {
	return cache.New(cfg, opts, with)
}

func defaultNewDiffer(opts diff.Options) (Differ, error) { return diff.New(opts) }

func defaultNewSyncer(cfg *rest.Config, opts sync.Options, with sync.Collaborators) (Syncer, error) {
	return sync.New(cfg, opts, with)
}

var _ Differ = (*diff.Differ)(nil)

// Sharder decides which applications this replica reconciles when several
// replicas of a host share them (Options.Sharder); *shard.Membership is
// the implementation over Kubernetes Leases.
type Sharder interface {
	// Owned returns, of the names of all top-level apps, those this
	// replica owns now. Apps an app renders (app of apps) follow their
	// parent.
	Owned(all []string) map[string]bool
	// Changes receives a value whenever Owned may answer differently.
	Changes() <-chan struct{}
}
