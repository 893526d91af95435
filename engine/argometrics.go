package engine

import (
	"errors"
	"strconv"

	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/sync"
	"github.com/prometheus/client_golang/prometheus"
)

// argoMetrics are Argo CD's application controller series, under its
// names and labels, registered when Options.ArgoMetrics is set so that
// dashboards and alerts written for Argo CD work (docs/monitoring.md maps
// each onto the engine's own gitops_* series):
//
//   - argocd_app_info{name,namespace,project,dest_server,dest_namespace,
//     sync_status,health_status,repo,autosync_enabled}: 1 per app of Run;
//   - argocd_app_sync_total{name,namespace,project,dest_server,phase};
//   - argocd_app_reconcile{namespace,dest_server}: refresh durations;
//   - argocd_git_request_total{repo,request_type}: ls-remote (a resolve)
//     and fetch (a snapshot) of each source;
//   - argocd_cluster_api_resource_objects{name,server}: objects in each
//     connected cluster's cache.
type argoMetrics struct {
	syncs     *prometheus.CounterVec
	reconcile *prometheus.HistogramVec
	git       *prometheus.CounterVec
}

func newArgoMetrics(e *Engine, reg prometheus.Registerer) (*argoMetrics, error) {
	m := &argoMetrics{
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "argocd_app_sync_total",
			Help: "Sync operations by phase (Argo CD's name)."}, []string{"name", "namespace", "project", "dest_server", "phase"}),
		reconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "argocd_app_reconcile",
			Help:    "Application refresh duration in seconds (Argo CD's name).",
			Buckets: []float64{0.25, 0.5, 1, 2, 4, 8, 16}}, []string{"namespace", "dest_server"}),
		git: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "argocd_git_request_total",
			Help: "Requests for the sources of apps: ls-remote (resolve) and fetch (snapshot) (Argo CD's name)."}, []string{"repo", "request_type"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.syncs, m.reconcile, m.git, argoCollector{e}} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *argoMetrics) sync(e *Engine, app *Application, phase sync.OperationPhase) {
	if m != nil {
		m.syncs.WithLabelValues(app.Name, app.Namespace, projectOf(app), e.destServer(app), string(phase)).Inc()
	}
}

func (m *argoMetrics) reconciled(e *Engine, app *Application, seconds float64) {
	if m != nil {
		m.reconcile.WithLabelValues(app.Namespace, e.destServer(app)).Observe(seconds)
	}
}

func (m *argoMetrics) gitRequest(repoURL, op string) {
	if m == nil {
		return
	}
	typ := "fetch"
	if op == "resolve" {
		typ = "ls-remote"
	}
	m.git.WithLabelValues(source.RedactURL(repoURL), typ).Inc()
}

func projectOf(app *Application) string {
	if app.Spec.Project == "" {
		return "default"
	}
	return app.Spec.Project
}

// destServer is the app's destination server URL (its cluster's, when
// the destination names the cluster).
func (e *Engine) destServer(app *Application) string {
	d := app.Spec.Destination
	if d.Server != "" || d.Name == "" {
		return d.Server
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if cs, ok := e.clusters[d.Name]; ok {
		return cs.cfg.Server
	}
	return ""
}

// argoCollector computes argocd_app_info and
// argocd_cluster_api_resource_objects when scraped.
type argoCollector struct{ e *Engine }

var (
	argoAppInfo = prometheus.NewDesc("argocd_app_info", "Information about an application (Argo CD's name); always 1.",
		[]string{"name", "namespace", "project", "dest_server", "dest_namespace", "sync_status", "health_status", "repo", "autosync_enabled"}, nil)
	argoClusterObjects = prometheus.NewDesc("argocd_cluster_api_resource_objects", "Objects in the cluster cache (Argo CD's name).",
		[]string{"name", "server"}, nil)
)

// Describe implements prometheus.Collector.
func (argoCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- argoAppInfo
	ch <- argoClusterObjects
}

// Collect implements prometheus.Collector.
func (c argoCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	type info struct {
		app    *Application
		status Status
		known  bool
	}
	var apps []info
	e.mu.Lock()
	r := e.runner
	seen := map[*clusterState]bool{}
	var clusters []*clusterState
	for _, cs := range e.clusters {
		if !seen[cs] {
			seen[cs] = true
			clusters = append(clusters, cs)
		}
	}
	e.mu.Unlock()
	if r != nil {
		r.mu.Lock()
		for name, st := range r.apps {
			if r.ownsLocked(name) {
				apps = append(apps, info{st.app, st.status, st.hasState})
			}
		}
		r.mu.Unlock()
	}
	for _, a := range apps {
		syncStatus, healthStatus := string(Unknown), "Unknown"
		if a.known {
			syncStatus, healthStatus = string(a.status.Sync), string(a.status.Health.Code)
		}
		repo := ""
		if srcs := a.app.Spec.AllSources(); len(srcs) > 0 {
			repo = source.RedactURL(srcs[0].RepoURL)
		}
		p := a.app.Spec.SyncPolicy
		auto := p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled)
		ch <- prometheus.MustNewConstMetric(argoAppInfo, prometheus.GaugeValue, 1, a.app.Name, a.app.Namespace, projectOf(a.app),
			e.destServer(a.app), a.app.Spec.Destination.Namespace, syncStatus, healthStatus, repo, strconv.FormatBool(auto))
	}
	for _, cs := range clusters {
		cache := cs.connectedCache()
		if l, ok := cache.(interface{ Len() int }); ok {
			ch <- prometheus.MustNewConstMetric(argoClusterObjects, prometheus.GaugeValue, float64(l.Len()), cs.cfg.Name, cs.cfg.Server)
		}
	}
}
