package clusters

import (
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/sync"
)

// Cache is a cluster's live-state cache (cache.Interface, the engine's
// ClusterCache).
type Cache = cache.Interface

// Syncer runs sync operations against one cluster (sync.Interface, the
// engine's Syncer).
type Syncer = sync.Interface

// NewCacheFunc builds a cluster's cache.
type NewCacheFunc func(cfg *rest.Config, opts cache.Options, with cache.Collaborators) (Cache, error)

// NewSyncerFunc builds a syncer of a cluster.
type NewSyncerFunc func(cfg *rest.Config, opts sync.Options, with sync.Collaborators) (Syncer, error)
