package notify

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the controller's collectors, registered with the host's
// Registerer (never the global one). Argo CD's notification controller
// exports argocd_notifications_deliveries_total{trigger,notifier,succeeded}
// and argocd_notifications_trigger_eval_total{name,triggered}; these map
// onto them one-to-one (docs/monitoring.md).
type metrics struct {
	sent, failed *prometheus.CounterVec
	evaluations  *prometheus.CounterVec
	dropped      prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gitops_notifications_sent_total",
			Help: "Notifications delivered, by trigger and service."}, []string{"trigger", "service"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gitops_notifications_failed_total",
			Help: "Notifications given up after their retries, by trigger and service."}, []string{"trigger", "service"}),
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gitops_notifications_trigger_evaluations_total",
			Help: "Trigger evaluations, by trigger and whether a condition matched."}, []string{"trigger", "matched"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "gitops_notifications_dropped_total",
			Help: "Application changes not evaluated because the controller's queue was full."}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	for _, c := range []**prometheus.CounterVec{&m.sent, &m.failed, &m.evaluations} {
		if *c, err = register(reg, *c); err != nil {
			return nil, err
		}
	}
	if m.dropped, err = register(reg, m.dropped); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector already registered under
// its name, so that two controllers on one registry share the series.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}
