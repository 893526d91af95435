package engine

import (
	"fmt"

	"github.com/kubegitops/gitops/engine/internal/clusters"
	"github.com/kubegitops/gitops/engine/internal/metrics"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/source/integrity"
	"github.com/kubegitops/gitops/state"
)

// New builds an Engine. Clusters are connected lazily, on the first app
// that names them.
func New(opts Options) (*Engine, error) {
	d := DefaultOptions()
	if len(opts.Clusters) == 0 {
		return nil, fmt.Errorf("gitops: no clusters configured")
	}
	if err := normalizeLive(&opts); err != nil {
		return nil, err
	}
	opts.Credentials = unscopedCredentials(opts)
	if opts.ClusterSyncTimeout <= 0 {
		opts.ClusterSyncTimeout = d.ClusterSyncTimeout
	}
	if opts.ControlNamespace == "" {
		opts.ControlNamespace = d.ControlNamespace
	}
	if opts.RefCacheTTL <= 0 {
		opts.RefCacheTTL = d.RefCacheTTL
	}
	if opts.Interval > 0 {
		opts.RefCacheTTL = min(opts.RefCacheTTL, opts.Interval)
	}
	if opts.ReconcileWorkers <= 0 {
		opts.ReconcileWorkers = d.ReconcileWorkers
	}
	if opts.SyncWorkers <= 0 {
		opts.SyncWorkers = d.SyncWorkers
	}
	if opts.Log.GetSink() == nil {
		opts.Log = d.Log
	}
	if opts.State == nil {
		opts.State = state.NewMemoryStore()
	}
	if opts.NewClusterCache == nil {
		opts.NewClusterCache = defaultNewClusterCache
	}
	forkDiffers := opts.NewDiffer == nil
	if forkDiffers {
		opts.NewDiffer = defaultNewDiffer
	}
	if opts.NewSyncer == nil {
		opts.NewSyncer = defaultNewSyncer
	}
	e := &Engine{
		opts:        opts,
		syncSem:     make(chan struct{}, opts.SyncWorkers),
		projects:    newProjectSet(opts.Projects),
		forkDiffers: forkDiffers,
		integrity:   integrity.NewVerifier(integrity.DefaultOptions()),
	}
	e.Ops = Ops{e}
	ring, err := integrity.ParseKeyRing(opts.GnuPGKeys)
	if err != nil {
		return nil, fmt.Errorf("gitops: Options.GnuPGKeys: %w", err)
	}
	e.integrity.SetKeyRing(ring)
	checker := opts.Health
	if checker == nil {
		if checker, err = health.NewChecker(health.DefaultOptions()); err != nil {
			return nil, fmt.Errorf("gitops: health checker: %w", err)
		}
	}
	e.health = &liveChecker{}
	e.health.set(checker)
	var snapshot metrics.Snapshot
	if opts.ArgoMetrics {
		snapshot = e.metricsSnapshot
	}
	if e.metrics, err = metrics.New(opts.Registerer, snapshot); err != nil {
		return nil, err
	}
	if err := e.newDesired(); err != nil {
		return nil, err
	}
	p, err := e.buildParts(opts)
	if err != nil {
		return nil, err
	}
	e.live.Store(p)
	if e.clusters, err = clusters.New(e.clusterSettings(p), e.clusterCollaborators(p), clusterConfigs(opts.Clusters)); err != nil {
		return nil, err
	}
	return e, nil
}

// Close stops the engine's cluster caches.
func (e *Engine) Close() { e.clusters.Close() }
