package engine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/engine/internal/clusters"
	"github.com/kubegitops/gitops/sync"
)

// clusterSettings are the settings every cluster's cache and syncers
// share: Options.Cache and Options.Sync of the live parts p, with the
// two the comparison needs turned on (they add to what the cache keeps,
// never take a setting away).
func (e *Engine) clusterSettings(p *liveParts) clusters.Settings {
	c := p.opts.Cache
	if !c.KeepManagedFields && len(c.KeepManagedFieldsOf) == 0 {
		// The comparison predicts what the next server-side apply leaves
		// (fields we own and no longer send are removed; fields others
		// applied or own through a subresource are theirs), which needs
		// the managers of each field.
		c.KeepManagedFields = true
	}
	if p.opts.Sync.ClientSideApply {
		c.KeepLastApplied = true // the three-way comparison's base
	}
	return clusters.Settings{Cache: c, Sync: p.opts.Sync, QPS: p.opts.QPS, Burst: p.opts.Burst, SyncTimeout: e.opts.ClusterSyncTimeout}
}

// clusterCollaborators are what every cluster's cache and syncers are
// built with and ask: the live parts' tracking and write limit, the
// engine's health checker, logger and registerer; the cache keeps what
// ResourceTree shows (withNodeFacts) and, with
// Options.IgnoreResourceUpdates, drops the updates that change nothing
// that matters.
func (e *Engine) clusterCollaborators(p *liveParts) clusters.Collaborators {
	populate := cache.DefaultPopulate()
	var skip func(old, cur *unstructured.Unstructured) bool
	if p.updates != nil {
		skip = p.updates.Skip
		populate = clusters.KeepAnnotatedWhole(populate)
	}
	return clusters.Collaborators{
		NewCache:  e.opts.NewClusterCache,
		NewSyncer: e.opts.NewSyncer,
		Cache: cache.Collaborators{Tracking: p.opts.Tracking, Populate: withNodeFacts(populate, e.health), SkipUpdate: skip,
			Logger: e.opts.Log, Registerer: e.opts.Registerer},
		Sync: sync.Collaborators{Tracking: p.opts.Tracking, Health: e.health, Log: e.opts.Log, Writes: p.writes},
		Log:  e.opts.Log,
	}
}
