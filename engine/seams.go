package engine

import (
	"context"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// ClusterCache is what the engine needs of a cluster's live-state cache;
// *cache.ClusterCache is the default (Options.NewClusterCache).
type ClusterCache interface {
	// Start lists and watches until ctx ends.
	Start(ctx context.Context) error
	// WaitForSync blocks until the first listing is done, or ctx ends.
	WaitForSync(ctx context.Context) error
	// Stop ends the watches.
	Stop()
	// Get returns the cached object of key.
	Get(key resource.Key) (*unstructured.Unstructured, bool)
	// Managed returns the objects an app's tracking id names.
	Managed(app string) []*unstructured.Unstructured
	// Namespace returns the keys of the cached objects of a namespace.
	Namespace(ns string) []resource.Key
	// Tainted returns the kinds that cannot be served, with why.
	Tainted() map[schema.GroupVersionKind]error
	// APIResources and ServerVersion describe the cluster for renderers.
	APIResources() []metav1.APIResourceList
	ServerVersion() string
	// Subscribe calls fn with changes until unsubscribed.
	Subscribe(fn func(cache.Event)) (unsubscribe func())
}

// Differ compares one desired object with its live object; *diff.Differ is
// the default (Options.NewDiffer).
type Differ interface {
	Diff(ctx context.Context, desired, live *unstructured.Unstructured) (diff.Result, error)
	// KeepIgnored returns desired with the fields the app's ignore rules
	// cover set to their live values: what a sync with
	// RespectIgnoreDifferences=true applies (sync.Request.KeepIgnored).
	KeepIgnored(ctx context.Context, desired, live *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// Syncer runs sync operations against one cluster; *sync.Syncer is the
// default (Options.NewSyncer).
type Syncer interface {
	Sync(ctx context.Context, req sync.Request) (sync.Result, error)
	// Delete deletes the objects an application manages (cascading
	// deletion of the application).
	Delete(ctx context.Context, req sync.DeleteRequest) (sync.DeleteResult, error)
}

func defaultNewClusterCache(cfg *rest.Config, opts cache.Options, with cache.Collaborators) (ClusterCache, error) {
	return cache.New(cfg, opts, with)
}

func defaultNewDiffer(opts diff.Options) (Differ, error) { return diff.New(opts) }

func defaultNewSyncer(cfg *rest.Config, opts sync.Options, with sync.Collaborators) (Syncer, error) {
	return sync.New(cfg, opts, with)
}

var (
	_ ClusterCache = (*cache.ClusterCache)(nil)
	_ Differ       = (*diff.Differ)(nil)
	_ Syncer       = (*sync.Syncer)(nil)
)

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
