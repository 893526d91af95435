package cache

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the cache's Prometheus collectors, labelled with the cluster
// name. They exist (and are updated) even when no Registerer is given.
type metrics struct {
	watches     prometheus.Gauge
	watchEvents *prometheus.CounterVec
	relists     prometheus.Counter
	suppressed  prometheus.Counter
	listSeconds prometheus.Histogram
	// reg and registered are where the collectors were registered, so that
	// a stopped cache frees their names for the next cache of its cluster.
	reg        prometheus.Registerer
	registered []prometheus.Collector
}

func newMetrics(c *ClusterCache, reg prometheus.Registerer, cluster string) (*metrics, error) {
	labels := prometheus.Labels{"cluster": cluster}
	m := &metrics{
		watches: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gitops_cluster_cache_watches", Help: "Running list-watches (one per kind, or per kind and namespace).", ConstLabels: labels,
		}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_cluster_cache_watch_events_total", Help: "Watch events received, by type.", ConstLabels: labels,
		}, []string{"type"}),
		relists: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gitops_cluster_cache_relists_total", Help: "Lists restarted because a resourceVersion or continue token expired (410 Gone).", ConstLabels: labels,
		}),
		suppressed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gitops_cluster_cache_ignored_updates_total", Help: "Updates not announced to subscribers because Collaborators.SkipUpdate said they change nothing that matters.", ConstLabels: labels,
		}),
		listSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gitops_cluster_cache_list_duration_seconds", Help: "Duration of a full paginated list of one kind.", ConstLabels: labels,
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 8),
		}),
	}
	if reg == nil {
		return m, nil
	}
	objects := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gitops_cluster_cache_objects", Help: "Objects in the cluster cache.", ConstLabels: labels,
	}, func() float64 { return float64(c.Len()) })
	tainted := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gitops_cluster_cache_tainted_kinds", Help: "Kinds not served: failed list or watch, forbidden, or failed discovery.", ConstLabels: labels,
	}, func() float64 { return float64(len(c.Tainted())) })
	m.reg = reg
	for _, col := range []prometheus.Collector{objects, tainted, m.watches, m.watchEvents, m.relists, m.suppressed, m.listSeconds} {
		if err := reg.Register(col); err != nil {
			m.unregister()
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("cache: metrics for cluster %q already registered: give each cache its own Name", cluster)
			}
			return nil, fmt.Errorf("cache: register metrics: %w", err)
		}
		m.registered = append(m.registered, col)
	}
	return m, nil
}

// unregister removes the collectors from the Registerer: the cache is done,
// and a new cache of the same cluster (an engine built again in the same
// process) registers its own.
func (m *metrics) unregister() {
	if m == nil {
		return
	}
	for _, col := range m.registered {
		m.reg.Unregister(col)
	}
	m.registered = nil
}
