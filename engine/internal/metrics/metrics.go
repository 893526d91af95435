package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Set is one engine's collectors. Its exported collectors are read by the
// engine's tests; the engine records through the methods.
type Set struct {
	// Reconcile is gitops_reconcile_duration_seconds: one histogram for
	// the engine's apps, as Argo CD's argocd_app_reconcile has no app
	// label (a histogram per app is 15 series each, 150,000 at 10,000
	// apps).
	Reconcile prometheus.Histogram
	// Reconciles is gitops_reconcile_total{app}: each app's refreshes.
	Reconciles *prometheus.CounterVec
	// Syncs is gitops_sync_total{app,phase}.
	Syncs *prometheus.CounterVec
	// GitRequests is gitops_source_requests_total{operation,result}.
	GitRequests *prometheus.CounterVec
	// ApplyInFlight is gitops_sync_operations_in_flight.
	ApplyInFlight prometheus.Gauge
	// Actions is gitops_resource_actions_total{app,action,result}.
	Actions *prometheus.CounterVec
	// Refreshes is gitops_refresh_total{how}: "rendered" (rendered and
	// compared) or "memoized" (nothing the refresh read had changed).
	Refreshes *prometheus.CounterVec
	// argo are Argo CD's series, nil when they are off.
	argo *argoSeries
}

// New builds the engine's series and registers them on reg (none when reg
// is nil). With snapshot set, Argo CD's series are built and registered
// too, the scraped ones answered by snapshot.
func New(reg prometheus.Registerer, snapshot Snapshot) (*Set, error) {
	m := &Set{
		Reconcile: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gitops_reconcile_duration_seconds", Help: "Time to refresh one application.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}),
		Reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_reconcile_total", Help: "Refreshes of each application."}, []string{"app"}),
		Syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_sync_total", Help: "Sync operations by result."}, []string{"app", "phase"}),
		GitRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_source_requests_total", Help: "Resolves and snapshots of app sources, by operation and result."}, []string{"operation", "result"}),
		ApplyInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gitops_sync_operations_in_flight", Help: "Sync operations running."}),
		Actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_resource_actions_total", Help: "Resource actions run, by result."}, []string{"app", "action", "result"}),
		Refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gitops_refresh_total", Help: "Refreshes that compared, by how: rendered and compared, or memoized (nothing they read had changed)."}, []string{"how"}),
	}
	if err := register(reg, m.Reconcile, m.Reconciles, m.Syncs, m.GitRequests, m.ApplyInFlight, m.Actions, m.Refreshes); err != nil {
		return nil, err
	}
	if snapshot != nil {
		a, err := newArgoSeries(reg, snapshot)
		if err != nil {
			return nil, err
		}
		m.argo = a
	}
	return m, nil
}

// register registers cs on reg, sharing a collector another engine
// registered there already.
func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return err
			}
		}
	}
	return nil
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// SourceRequest counts one resolve ("resolve") or snapshot ("fetch") of an
// app source of repoURL.
func (m *Set) SourceRequest(repoURL, op string, err error) {
	m.GitRequests.WithLabelValues(op, result(err)).Inc()
	m.argo.gitRequest(repoURL, op)
}

// Action counts one resource action run for app.
func (m *Set) Action(app, action string, err error) {
	m.Actions.WithLabelValues(app, action, result(err)).Inc()
}

// Refreshed counts one refresh that compared: memoized or rendered.
func (m *Set) Refreshed(memoized bool) {
	how := "rendered"
	if memoized {
		how = "memoized"
	}
	m.Refreshes.WithLabelValues(how).Inc()
}

// Reconciled records how long a refresh of app took.
func (m *Set) Reconciled(app App, seconds float64) {
	m.Reconcile.Observe(seconds)
	m.Reconciles.WithLabelValues(app.Name).Inc()
	m.argo.reconciled(app, seconds)
}

// SyncStarted counts a sync operation that starts writing; SyncDone ends
// it with its phase.
func (m *Set) SyncStarted() { m.ApplyInFlight.Inc() }

// SyncDone counts the end of a sync operation SyncStarted counted, with
// the phase it ended in.
func (m *Set) SyncDone(app App, phase string) {
	m.ApplyInFlight.Dec()
	m.Syncs.WithLabelValues(app.Name, phase).Inc()
	m.argo.synced(app, phase)
}
