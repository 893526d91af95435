package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubegitops/gitops/source"
)

// App is what the series say of one application.
type App struct {
	// Name, Namespace and Project name the app (Project "default" when
	// it names none).
	Name, Namespace, Project string
	// DestServer is its destination's server URL, DestNamespace its
	// namespace.
	DestServer, DestNamespace string
}

// AppInfo is one app of argocd_app_info.
type AppInfo struct {
	App
	// Sync and Health are its last status ("Unknown" when it has none).
	Sync, Health string
	// Repo is the URL of its first source, credentials redacted.
	Repo string
	// AutoSync says whether automated sync is on.
	AutoSync bool
}

// ClusterObjects is one cluster of argocd_cluster_api_resource_objects.
type ClusterObjects struct {
	// Name and Server name the cluster.
	Name, Server string
	// Objects are the objects in its cache.
	Objects int
}

// Snapshot answers a scrape: the apps the engine reconciles and the
// connected clusters whose caches count their objects.
type Snapshot func() ([]AppInfo, []ClusterObjects)

// argoSeries are Argo CD's application controller series:
//
//   - argocd_app_info{name,namespace,project,dest_server,dest_namespace,
//     sync_status,health_status,repo,autosync_enabled}: 1 per app of Run;
//   - argocd_app_sync_total{name,namespace,project,dest_server,phase};
//   - argocd_app_reconcile{namespace,dest_server}: refresh durations;
//   - argocd_git_request_total{repo,request_type}: ls-remote (a resolve)
//     and fetch (a snapshot) of each source;
//   - argocd_cluster_api_resource_objects{name,server}: objects in each
//     connected cluster's cache.
type argoSeries struct {
	syncs     *prometheus.CounterVec
	reconcile *prometheus.HistogramVec
	git       *prometheus.CounterVec
}

func newArgoSeries(reg prometheus.Registerer, snapshot Snapshot) (*argoSeries, error) {
	m := &argoSeries{
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "argocd_app_sync_total",
			Help: "Sync operations by phase (Argo CD's name)."}, []string{"name", "namespace", "project", "dest_server", "phase"}),
		reconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "argocd_app_reconcile",
			Help:    "Application refresh duration in seconds (Argo CD's name).",
			Buckets: []float64{0.25, 0.5, 1, 2, 4, 8, 16}}, []string{"namespace", "dest_server"}),
		git: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "argocd_git_request_total",
			Help: "Requests for the sources of apps: ls-remote (resolve) and fetch (snapshot) (Argo CD's name)."}, []string{"repo", "request_type"}),
	}
	if err := register(reg, m.syncs, m.reconcile, m.git, argoCollector{snapshot}); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *argoSeries) synced(app App, phase string) {
	if m != nil {
		m.syncs.WithLabelValues(app.Name, app.Namespace, app.Project, app.DestServer, phase).Inc()
	}
}

func (m *argoSeries) reconciled(app App, seconds float64) {
	if m != nil {
		m.reconcile.WithLabelValues(app.Namespace, app.DestServer).Observe(seconds)
	}
}

func (m *argoSeries) gitRequest(repoURL, op string) {
	if m == nil {
		return
	}
	typ := "fetch"
	if op == "resolve" {
		typ = "ls-remote"
	}
	m.git.WithLabelValues(source.RedactURL(repoURL), typ).Inc()
}

// argoCollector computes argocd_app_info and
// argocd_cluster_api_resource_objects when scraped.
type argoCollector struct{ snapshot Snapshot }

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
	apps, clusters := c.snapshot()
	for _, a := range apps {
		ch <- prometheus.MustNewConstMetric(argoAppInfo, prometheus.GaugeValue, 1, a.Name, a.Namespace, a.Project,
			a.DestServer, a.DestNamespace, a.Sync, a.Health, a.Repo, strconv.FormatBool(a.AutoSync))
	}
	for _, cl := range clusters {
		ch <- prometheus.MustNewConstMetric(argoClusterObjects, prometheus.GaugeValue, float64(cl.Objects), cl.Name, cl.Server)
	}
}
