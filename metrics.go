package gitops

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the engine's Prometheus collectors, registered with the
// host's Registerer (never the global one). With no Registerer they still
// count, unregistered, so the code paths are the same.
type metrics struct {
	reconcile      *prometheus.HistogramVec
	syncs          *prometheus.CounterVec
	gitRequests    *prometheus.CounterVec
	renderDuration prometheus.Histogram
	renderPending  prometheus.Gauge
	cachedObjects  *prometheus.GaugeVec
	taintedKinds   *prometheus.GaugeVec
	applyInFlight  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		reconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gitops_reconcile_duration_seconds", Help: "Time to refresh one application.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}, []string{"app"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_sync_total", Help: "Sync operations by result."}, []string{"app", "phase"}),
		gitRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_git_requests_total", Help: "Source requests by operation and result."}, []string{"operation", "result"}),
		renderDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gitops_render_duration_seconds", Help: "Time to render one source (cache hits included).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		renderPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gitops_render_pending", Help: "Renders started and not finished."}),
		cachedObjects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gitops_cluster_cached_objects", Help: "Objects in each cluster cache."}, []string{"cluster"}),
		taintedKinds: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gitops_cluster_tainted_kinds", Help: "Kinds each cluster cache cannot serve."}, []string{"cluster"}),
		applyInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gitops_sync_operations_in_flight", Help: "Sync operations running."}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.reconcile, m.syncs, m.gitRequests, m.renderDuration, m.renderPending,
		m.cachedObjects, m.taintedKinds, m.applyInFlight} {
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

func (m *metrics) renderStarted() func() {
	start := time.Now()
	m.renderPending.Inc()
	return func() {
		m.renderPending.Dec()
		m.renderDuration.Observe(time.Since(start).Seconds())
	}
}
