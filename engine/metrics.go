package engine

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the engine's own Prometheus collectors, registered with the
// host's Registerer (never the global one); the render cache, the cluster
// caches and the Git source register theirs on the same Registerer
// (gitops_render_*, gitops_cluster_cache_*, gitops_source_git_*). With no
// Registerer they still count, unregistered, so the code paths are the same.
type metrics struct {
	reconcile     *prometheus.HistogramVec
	syncs         *prometheus.CounterVec
	gitRequests   *prometheus.CounterVec
	applyInFlight prometheus.Gauge
	argo          *argoMetrics // Options.ArgoMetrics; nil when off
	actions       *prometheus.CounterVec
	// refreshes counts refreshes by how they were answered: "rendered"
	// (rendered and compared) or "memoized" (nothing they read had
	// changed; see refreshMemo).
	refreshes *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		reconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gitops_reconcile_duration_seconds", Help: "Time to refresh one application.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}, []string{"app"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_sync_total", Help: "Sync operations by result."}, []string{"app", "phase"}),
		gitRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_source_requests_total", Help: "Resolves and snapshots of app sources, by operation and result."}, []string{"operation", "result"}),
		applyInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gitops_sync_operations_in_flight", Help: "Sync operations running."}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_resource_actions_total", Help: "Resource actions run, by result."}, []string{"app", "action", "result"}),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_refresh_total", Help: "Refreshes that compared, by how: rendered and compared, or memoized (nothing they read had changed)."}, []string{"how"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.reconcile, m.syncs, m.gitRequests, m.applyInFlight, m.actions, m.refreshes} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *metrics) gitRequest(op string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.gitRequests.WithLabelValues(op, result).Inc()
}

func (m *metrics) action(app, action string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.actions.WithLabelValues(app, action, result).Inc()
}

// refreshed counts one refresh that compared: memoized or rendered.
func (m *metrics) refreshed(memoized bool) {
	how := "rendered"
	if memoized {
		how = "memoized"
	}
	m.refreshes.WithLabelValues(how).Inc()
}
