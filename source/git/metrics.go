package git

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubegitops/gitops/source"
)

// metrics count what the Source costs Git hosts. All are no-ops without a
// Registerer.
type metrics struct {
	requests *prometheus.CounterVec   // op: ls-remote|fetch; result: ok|error|timeout
	resolves *prometheus.CounterVec   // cache: hit|miss
	fetchDur *prometheus.HistogramVec // result
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_source_git_requests_total",
			Help: "Network operations against Git hosts, by operation (ls-remote, fetch) and result (ok, error, timeout).",
		}, []string{"op", "result"}),
		resolves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_source_git_resolves_total",
			Help: "Resolve calls that needed refs, by whether the cached refs served them (hit) or a listing was needed (miss).",
		}, []string{"cache"}),
		fetchDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gitops_source_git_fetch_duration_seconds",
			Help:    "Duration of fetches, by result.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
		}, []string{"result"}),
	}
	if reg != nil {
		m.requests = register(reg, m.requests)
		m.resolves = register(reg, m.resolves)
		m.fetchDur = register(reg, m.fetchDur)
	}
	return m
}

// register registers c, or returns the collector already registered under
// its name (two Sources sharing one registry share the series).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}

func (m *metrics) request(op string, err error) {
	m.requests.WithLabelValues(op, resultOf(err)).Inc()
}

func (m *metrics) fetched(start time.Time, err error) {
	m.request("fetch", err)
	m.fetchDur.WithLabelValues(resultOf(err)).Observe(time.Since(start).Seconds())
}

func resultOf(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, source.ErrTimeout):
		return "timeout"
	}
	return "error"
}
