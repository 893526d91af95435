package engine

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/health/actions"
	"github.com/kubegitops/gitops/sync"
)

// buildParts builds the live parts of opts; the health checker is the
// engine's swappable one, the renderer its swappable tools.
func (e *Engine) buildParts(opts Options) (*liveParts, error) {
	p := &liveParts{opts: opts, comparer: newComparer(opts, e.health, e.forkDiffers), writes: sync.NewLimiter(opts.ClusterWriteLimit)}
	var err error
	if p.updates, err = newUpdateIgnorer(opts, e.health); err != nil {
		return nil, err
	}
	if p.actions = opts.Actions; p.actions == nil {
		if p.actions, err = actions.New(actions.DefaultOptions()); err != nil {
			return nil, fmt.Errorf("gitops: actions: %w", err)
		}
	}
	p.desired = desired.NewBuilder(desired.Config{
		Sources: e.sources, Renderer: e.renderer, Project: e.project,
		Filter: opts.Cache.Filter, RenderTimeout: opts.RenderTimeout,
		TimeoutError: func(app string, timeout time.Duration, err error) error {
			return &RenderTimeoutError{App: app, Timeout: timeout, Err: err}
		},
	})
	return p, nil
}

// Reconfigure changes, while the engine runs, the options a running engine
// can take again; it takes these fields of next and no other (the others
// are New's: Clusters and Projects have SetClusters and SetProjects):
//   - Health and Actions (nil: the defaults, as in New);
//   - what the comparison reads: IgnoreDifferences, IgnoreAggregatedRoles,
//     KnownTypeFields, CompareStatus, IgnoreStatus, ServerSideDiff and
//     JQTimeout; every app's next refresh compares with them (the
//     comparison's memos are dropped);
//   - what renders read: Toolkit, Renderers and RenderTimeout (the render
//     cache is kept: a renderer's options are part of its keys);
//   - what the clusters' caches and syncers are built with: Cache (its
//     Filter, resource exclusions and inclusions, also decides which
//     desired objects are excluded), Tracking, Sync, QPS, Burst,
//     IgnoreResourceUpdates, ClusterWriteLimit, Impersonation. When any of
//     them changed, every cluster's cache is stopped and the cluster
//     connects again, and lists every kind again, on its apps' next
//     refresh (Argo CD invalidates its cluster caches when these settings
//     change); Reconfigure then returns the names and servers of the
//     clusters;
//   - Run's Interval, Jitter and HardInterval.
//
// It fails, changing nothing, when next is invalid (a Tracking that does
// not validate, an ignore rule that does not compile, a Renderers kind no
// tool is). While Run runs, every app is queued for a refresh; a host with
// its own loop refreshes its apps itself. Operations already running go
// on with the settings they started with.
func (set Settings) Reconfigure(ctx context.Context, next Options) ([]string, error) {
	e := set.e

	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.reconfigureMu.Lock()
	defer e.reconfigureMu.Unlock()
	cur := e.parts()
	opts := cur.opts
	takeLive(&opts, next)
	if err := normalizeLive(&opts); err != nil {
		return nil, err
	}
	checker := opts.Health
	if checker == nil {
		var err error
		if checker, err = health.NewChecker(health.DefaultOptions()); err != nil {
			return nil, fmt.Errorf("gitops: health checker: %w", err)
		}
	}
	tools, err := newTools(opts, e.sources.Dependencies())
	if err != nil {
		return nil, err
	}
	p, err := e.buildParts(opts)
	if err != nil {
		return nil, err
	}
	e.health.set(checker)
	e.tools.set(tools)
	e.live.Store(p)
	var names []string
	if clustersChanged(cur.opts, opts) {
		names = e.clusters.Reconfigure(e.clusterSettings(p), e.clusterCollaborators(p))
	}
	e.mu.Lock()
	r := e.runner
	e.mu.Unlock()
	if r != nil {
		r.refreshAll()
	}
	return names, nil
}

// takeLive copies into dst the fields of src that Reconfigure takes.
func takeLive(dst *Options, src Options) {
	dst.Health, dst.Actions = src.Health, src.Actions
	dst.IgnoreDifferences, dst.IgnoreAggregatedRoles, dst.KnownTypeFields = src.IgnoreDifferences, src.IgnoreAggregatedRoles, src.KnownTypeFields
	dst.CompareStatus, dst.IgnoreStatus, dst.ServerSideDiff, dst.JQTimeout = src.CompareStatus, src.IgnoreStatus, src.ServerSideDiff, src.JQTimeout
	dst.Toolkit, dst.Renderers, dst.RenderTimeout = src.Toolkit, src.Renderers, src.RenderTimeout
	dst.Cache, dst.Tracking, dst.Sync, dst.QPS, dst.Burst = src.Cache, src.Tracking, src.Sync, src.QPS, src.Burst
	dst.IgnoreResourceUpdates, dst.ClusterWriteLimit, dst.Impersonation = src.IgnoreResourceUpdates, src.ClusterWriteLimit, src.Impersonation
	dst.Interval, dst.Jitter, dst.HardInterval = src.Interval, src.Jitter, src.HardInterval
}

// normalizeLive gives the live fields of opts their defaults, as New does,
// and checks them.
func normalizeLive(opts *Options) error {
	d := DefaultOptions()
	if opts.Tracking.AnnotationKey == "" {
		opts.Tracking = d.Tracking
	}
	if err := opts.Tracking.Validate(); err != nil {
		return fmt.Errorf("gitops: Options.Tracking: %w", err)
	}
	if opts.Interval == 0 {
		opts.Interval = d.Interval
	}
	if opts.QPS == 0 {
		opts.QPS, opts.Burst = d.QPS, d.Burst
	}
	if opts.QPS < 0 {
		opts.QPS, opts.Burst = -1, 0
	}
	switch opts.Impersonation {
	case ImpersonateWhenNamed, ImpersonationOff, ImpersonationEnforced:
	default:
		return fmt.Errorf("gitops: Options.Impersonation: unknown mode %q", opts.Impersonation)
	}
	return nil
}

// clustersChanged reports whether the settings the clusters' caches and
// syncers are built with differ between a and b.
func clustersChanged(a, b Options) bool {
	sa, sb := a.Sync, b.Sync
	sa.OnProgress, sb.OnProgress = nil, nil
	return !reflect.DeepEqual(a.Cache, b.Cache) || !reflect.DeepEqual(a.Tracking, b.Tracking) || !reflect.DeepEqual(sa, sb) ||
		(a.Sync.OnProgress == nil) != (b.Sync.OnProgress == nil) || a.QPS != b.QPS || a.Burst != b.Burst ||
		!reflect.DeepEqual(a.IgnoreResourceUpdates, b.IgnoreResourceUpdates) || a.ClusterWriteLimit != b.ClusterWriteLimit ||
		a.Impersonation != b.Impersonation
}

// refreshAll queues every app of Run.
func (r *runner) refreshAll() {
	r.mu.Lock()
	keys := make([]string, 0, len(r.apps))
	for k := range r.apps {
		keys = append(keys, k)
	}
	r.mu.Unlock()
	for _, k := range keys {
		r.queue.Add(k)
	}
}
