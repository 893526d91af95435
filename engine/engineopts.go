package engine

import (
	"fmt"
	"reflect"

	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// OwnedFieldError is returned by New when Options.Cache or Options.Sync,
// the templates of each cluster's cache and syncer options, set a field
// the engine fills in itself. The engine would overwrite it, so the
// setting would do nothing; Use says where it belongs instead.
//
// The fields the engine owns:
//
//   - Sync.Tracking and Cache.Tracking: Options.Tracking (a template's
//     value may only be the zero value or the package default);
//   - Sync.Health: Options.Health;
//   - Sync.ManagedObjects, Sync.Live and Sync.Absent: the engine answers from its
//     cluster cache;
//   - Sync.Admit: the app's project and Options.Policies;
//   - Sync.InSync: the app's differ (ApplyOutOfSyncOnly asks it).
//
// The engine also defaults, only when the template leaves them unset,
// Cache.Name (the cluster's name), Cache.Registerer (Options.Registerer),
// Cache.Logger and Sync.Log (Options.Log), and Cache.KeepManagedFields
// (true, unless KeepManagedFieldsOf is set); with Sync.ClientSideApply it
// sets Cache.KeepLastApplied, which the three-way comparison reads.
type OwnedFieldError struct {
	// Field is the field set, as "Options.Sync.Health".
	Field string
	// Use says what to set instead.
	Use string
}

// Error implements error.
func (e *OwnedFieldError) Error() string {
	return fmt.Sprintf("gitops: %s is set by the engine; use %s", e.Field, e.Use)
}

// checkOwnedFields refuses templates that set what the engine owns.
func checkOwnedFields(opts Options) error {
	tracking := func(t resource.Tracking) bool {
		return t != (resource.Tracking{}) && !reflect.DeepEqual(t, resource.DefaultTracking()) && !reflect.DeepEqual(t, opts.Tracking)
	}
	s, c := opts.Sync, opts.Cache
	for _, f := range []struct {
		set        bool
		field, use string
	}{
		{tracking(s.Tracking), "Options.Sync.Tracking", "Options.Tracking"},
		{tracking(c.Tracking), "Options.Cache.Tracking", "Options.Tracking"},
		{s.Health != nil, "Options.Sync.Health", "Options.Health"},
		{s.ManagedObjects != nil, "Options.Sync.ManagedObjects", "nothing (the engine answers from its cluster cache)"},
		{s.Live != nil, "Options.Sync.Live", "nothing (the engine answers from its cluster cache)"},
		{s.Absent != nil, "Options.Sync.Absent", "nothing (the engine answers from its cluster cache)"},
		{s.Admit != nil, "Options.Sync.Admit", "Options.Policies or the app's project"},
		{s.InSync != nil, "Options.Sync.InSync", "nothing (the app's differ decides, with ApplyOutOfSyncOnly)"},
	} {
		if f.set {
			return &OwnedFieldError{Field: f.field, Use: f.use}
		}
	}
	return nil
}

// syncerOptions are the options of every syncer of cluster cs (its own and
// those that impersonate a service account): the one place the template
// Options.Sync is completed.
func (e *Engine) syncerOptions(cs *clusterState) sync.Options {
	opts := e.opts.Sync
	opts.Tracking = e.opts.Tracking
	opts.Health = e.health
	opts.ManagedObjects = cs.managed
	opts.Live = cs.live
	opts.Absent = cs.absent
	if opts.Log.GetSink() == nil {
		opts.Log = e.opts.Log
	}
	return opts
}

// cacheOptions are the options of cluster cs's cache, from the template
// Options.Cache.
func (e *Engine) cacheOptions(cs *clusterState) cache.Options {
	opts := e.opts.Cache
	opts.Tracking = e.opts.Tracking
	if !opts.KeepManagedFields && len(opts.KeepManagedFieldsOf) == 0 {
		// The comparison predicts what the next server-side apply leaves
		// (fields we own and no longer send are removed; fields others
		// applied or own through a subresource are theirs), which needs
		// the managers of each field.
		opts.KeepManagedFields = true
	}
	if e.opts.Sync.ClientSideApply {
		opts.KeepLastApplied = true // the three-way comparison's base
	}
	if opts.Registerer == nil {
		opts.Registerer = e.opts.Registerer
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = e.opts.Log
	}
	if opts.Name == "" {
		opts.Name = cs.cfg.Name
	}
	if opts.Server == "" {
		opts.Server = cs.server()
	}
	if len(cs.cfg.Namespaces) > 0 {
		// The cluster's own restriction (its Secret's namespaces) is
		// narrower than any the host set for every cluster.
		opts.Namespaces, opts.ClusterKinds = cs.cfg.Namespaces, nil
		if cs.cfg.ClusterResources {
			opts.ClusterKinds = []cache.GroupKindMatch{{Group: "*", Kind: "*"}}
		}
	}
	populate := opts.Populate
	if populate == nil {
		populate = cache.DefaultPopulate()
	}
	if opts.SkipUpdate == nil && e.updates != nil {
		opts.SkipUpdate = e.updates.skip
		populate = keepAnnotatedWhole(populate)
	}
	// The descendants of apps' objects carry what ResourceTree shows.
	opts.Populate = withNodeFacts(populate, e.health)
	return opts
}

// clientConfig is the client configuration of cluster cs with the engine's
// rate limits.
func (e *Engine) clientConfig(cs *clusterState) *rest.Config {
	cfg := rest.CopyConfig(cs.cfg.Config)
	cfg.QPS, cfg.Burst = e.opts.QPS, e.opts.Burst
	return cfg
}
