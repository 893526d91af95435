package engine

import (
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/engine/internal/metrics"
	"github.com/kubegitops/gitops/source"
)

// metricsApp is what the metrics say of app.
func (e *Engine) metricsApp(app *Application) metrics.App {
	return metrics.App{Name: app.Name, Namespace: app.Namespace, Project: projectOf(app),
		DestServer: e.destServer(app), DestNamespace: app.Spec.Destination.Namespace}
}

// projectOf is the project app names, "default" when none.
func projectOf(app *Application) string {
	if app.Spec.Project == "" {
		return "default"
	}
	return app.Spec.Project
}

// metricsSnapshot answers a scrape of Argo CD's series
// (Options.ArgoMetrics): the apps this engine's Run owns, and the objects
// in each connected cluster's cache.
func (e *Engine) metricsSnapshot() ([]metrics.AppInfo, []metrics.ClusterObjects) {
	type info struct {
		app    *Application
		status appstatus.Status
		known  bool
	}
	var apps []info
	e.mu.Lock()
	r := e.runner
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
	out := make([]metrics.AppInfo, 0, len(apps))
	for _, a := range apps {
		ai := metrics.AppInfo{App: e.metricsApp(a.app), Sync: string(appstatus.Unknown), Health: "Unknown"}
		if a.known {
			ai.Sync, ai.Health = string(a.status.Sync), string(a.status.Health.Code)
		}
		if srcs := a.app.Spec.AllSources(); len(srcs) > 0 {
			ai.Repo = source.RedactURL(srcs[0].RepoURL)
		}
		p := a.app.Spec.SyncPolicy
		ai.AutoSync = p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled)
		out = append(out, ai)
	}
	return out, e.clusterObjects()
}
