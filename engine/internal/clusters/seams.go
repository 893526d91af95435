package clusters

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// Cache is a cluster's live-state cache: the method set of the engine's
// ClusterCache, so that either converts to the other.
type Cache interface {
	Start(ctx context.Context) error
	WaitForSync(ctx context.Context) error
	Stop()
	Get(key resource.Key) (*unstructured.Unstructured, bool)
	Managed(app string) []*unstructured.Unstructured
	Namespace(ns string) []resource.Key
	Tainted() map[schema.GroupVersionKind]error
	APIResources() []metav1.APIResourceList
	ServerVersion() string
	Subscribe(fn func(cache.Event)) (unsubscribe func())
}

// Syncer runs sync operations against one cluster: the method set of the
// engine's Syncer.
type Syncer interface {
	Sync(ctx context.Context, req sync.Request) (sync.Result, error)
	Delete(ctx context.Context, req sync.DeleteRequest) (sync.DeleteResult, error)
}

// NewCacheFunc builds a cluster's cache.
type NewCacheFunc func(cfg *rest.Config, opts cache.Options, with cache.Collaborators) (Cache, error)

// NewSyncerFunc builds a syncer of a cluster.
type NewSyncerFunc func(cfg *rest.Config, opts sync.Options, with sync.Collaborators) (Syncer, error)
