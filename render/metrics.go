package render

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// cacheMetrics are the metrics of a CachedRenderer; nil records nothing.
type cacheMetrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	pendingG    prometheus.Gauge
	storeErrors prometheus.Counter
}

func newCacheMetrics(reg prometheus.Registerer) *cacheMetrics {
	if reg == nil {
		return nil
	}
	m := &cacheMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_render_requests_total",
			Help: "Render requests by cache result: hit, miss, failure (a cached failure served), uncacheable.",
		}, []string{"result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gitops_render_duration_seconds",
			Help:    "Duration of renders that ran (cache misses), by outcome.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"outcome"}),
		pendingG: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gitops_render_pending",
			Help: "Renders waiting for one of the MaxConcurrent slots.",
		}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gitops_render_store_errors_total",
			Help: "Cache store reads and writes that failed (served as misses).",
		}),
	}
	// A registry that already holds these names (a second CachedRenderer
	// on it) keeps the first one's series; this one's are not exported.
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.pendingG, m.storeErrors} {
		_ = reg.Register(c)
	}
	return m
}

func (m *cacheMetrics) request(result string) {
	if m != nil {
		m.requests.WithLabelValues(result).Inc()
	}
}

func (m *cacheMetrics) pending(delta float64) {
	if m != nil {
		m.pendingG.Add(delta)
	}
}

func (m *cacheMetrics) observe(d time.Duration, err error) {
	if m != nil {
		outcome := "success"
		if err != nil {
			outcome = "error"
		}
		m.duration.WithLabelValues(outcome).Observe(d.Seconds())
	}
}

func (m *cacheMetrics) storeError() {
	if m != nil {
		m.storeErrors.Inc()
	}
}
