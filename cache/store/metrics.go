package store

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the series of one store (gitops_store_hits_total,
// gitops_store_misses_total, gitops_store_evictions_total,
// gitops_store_errors_total, gitops_store_bytes), labelled with its name.
// Stores in other packages (redisstore) count with it, so that every store
// reports the same series. A nil *Metrics records nothing.
type Metrics struct {
	hits, misses, evictions, errors prometheus.Counter
	bytes                           prometheus.Gauge
}

// NewMetrics registers the series of the store name with reg and returns
// them; nil when reg is nil. A second store with the same name shares the
// first one's series.
func NewMetrics(reg prometheus.Registerer, name string) *Metrics {
	if reg == nil {
		return nil
	}
	labels := prometheus.Labels{"store": name}
	m := &Metrics{
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

// Hit counts a lookup that found a live entry.
func (m *Metrics) Hit() {
	if m != nil {
		m.hits.Inc()
	}
}

// Miss counts a lookup that found nothing (a failed one included).
func (m *Metrics) Miss() {
	if m != nil {
		m.misses.Inc()
	}
}

// Evict counts an entry evicted to stay within a byte budget.
func (m *Metrics) Evict() {
	if m != nil {
		m.evictions.Inc()
	}
}

// Fail counts an operation that failed.
func (m *Metrics) Fail() {
	if m != nil {
		m.errors.Inc()
	}
}

// SetBytes reports the bytes the store holds.
func (m *Metrics) SetBytes(n int64) {
	if m != nil {
		m.bytes.Set(float64(n))
	}
}
