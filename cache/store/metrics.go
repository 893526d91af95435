package store

import "github.com/prometheus/client_golang/prometheus"

// metrics are the counters of one store; a nil *metrics records nothing.
type metrics struct {
	hits, misses, evictions, errors prometheus.Counter
	bytes                           prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, name string) *metrics {
	if reg == nil {
		return nil
	}
	labels := prometheus.Labels{"store": name}
	m := &metrics{
		hits:      prometheus.NewCounter(prometheus.CounterOpts{Name: "gitops_store_hits_total", Help: "Lookups that found a live entry.", ConstLabels: labels}),
		misses:    prometheus.NewCounter(prometheus.CounterOpts{Name: "gitops_store_misses_total", Help: "Lookups that found nothing (errors included).", ConstLabels: labels}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "gitops_store_evictions_total", Help: "Entries evicted to stay within the byte budget.", ConstLabels: labels}),
		errors:    prometheus.NewCounter(prometheus.CounterOpts{Name: "gitops_store_errors_total", Help: "Store operations that failed (the caller saw a miss or a skipped write).", ConstLabels: labels}),
		bytes:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "gitops_store_bytes", Help: "Bytes held by the store (memory stores only).", ConstLabels: labels}),
	}
	for _, c := range []prometheus.Collector{m.hits, m.misses, m.evictions, m.errors, m.bytes} {
		// A second store with the same name shares the first one's series.
		if err := reg.Register(c); err != nil {
			if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
				switch existing := are.ExistingCollector.(type) {
				case prometheus.Counter:
					switch c {
					case m.hits:
						m.hits = existing
					case m.misses:
						m.misses = existing
					case m.evictions:
						m.evictions = existing
					case m.errors:
						m.errors = existing
					}
				case prometheus.Gauge:
					m.bytes = existing
				}
			}
		}
	}
	return m
}

func (m *metrics) hit() {
	if m != nil {
		m.hits.Inc()
	}
}

func (m *metrics) miss() {
	if m != nil {
		m.misses.Inc()
	}
}

func (m *metrics) evict() {
	if m != nil {
		m.evictions.Inc()
	}
}

func (m *metrics) fail() {
	if m != nil {
		m.errors.Inc()
	}
}

func (m *metrics) setBytes(n int64) {
	if m != nil {
		m.bytes.Set(float64(n))
	}
}
