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
	for _, c := range []prometheus.Collector{m.sent, m.failed, m.evaluations, m.dropped} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
		}
	}
	return m, nil
}
