package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kubegitops/gitops/project"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// ImpersonatedConfig returns a copy of cfg that acts as a service account;
// it is project.ImpersonatedConfig.
func ImpersonatedConfig(cfg *rest.Config, namespace, name string) *rest.Config {
	return project.ImpersonatedConfig(cfg, namespace, name)
}

// checkApplication applies the project's rules for the application itself:
// its namespace (sourceNamespaces), sources and destination, and, when the
// project permits only the clusters scoped to it, the destination's
// cluster (a destination that names no configured cluster fails where it
// is connected).
func (e *Engine) checkApplication(proj *Project, app *Application) error {
	on := e.onCluster(app).Spec.Destination
	errs := []error{project.CheckSourceNamespace(proj, app.Namespace, e.opts.ControlNamespace), project.CheckApplicationOn(proj, app, on.Server, on.Name)}
	if proj.Spec.PermitOnlyProjectScopedClusters {
		if _, err := e.destination(app.Spec.Destination); err == nil {
			errs = append(errs, project.CheckScopedCluster(proj, e.scopedClusters(proj.Name), app.Spec.Destination, on.Server, on.Name))
		}
	}
	return errors.Join(errs...)
}

// onCluster returns the app with its destination's server and name both
// given, from the configured cluster it names by either (the app itself
// when it gives both or names no configured cluster): a project's
// destinations match the destination cluster by either, as in Argo CD,
// whichever the app writes. It is for project checks only.
func (e *Engine) onCluster(app *Application) *Application {
	d := app.Spec.Destination
	if d.Server != "" && d.Name != "" {
		return app
	}
	cs, err := e.destination(d)
	if err != nil {
		return app
	}
	out := app.DeepCopy()
	if d.Server == "" {
		out.Spec.Destination.Server = cs.Server()
	}
	if d.Name == "" {
		out.Spec.Destination.Name = cs.Name()
	}
	return out
}

// admission is the check a sync, a delete or an action runs on every
// object before it is written (project.Admission), on the app's
// destination cluster as onCluster gives it.
func (e *Engine) admission(proj *Project, app *Application) func(ctx context.Context, obj *unstructured.Unstructured, namespaced, prune bool) error {
	return project.Admission(proj, e.onCluster(app), e.opts.Policies...)
}

// CheckApplication applies the rules of app's project to the app itself,
// as a refresh and a sync check them before anything else: the project
// exists, and allows the app's namespace (sourceNamespaces), its sources
// (sourceRepos) and its destination. A destination naming a configured
// cluster by name is checked with that cluster's server too, and one by
// server with the cluster's name, as Argo CD resolves the destination's
// cluster before matching the project's destinations. A host calls it to
// refuse an app when it is created, as Argo CD's API server does; the
// error is a *PolicyError (several joined), or the unknown project's.
func (ops Ops) CheckApplication(app *Application) error {
	e := ops.e

	proj, err := e.project(app)
	if err != nil {
		return err
	}
	return e.checkApplication(proj, app)
}

// CheckSync says whether a sync of app asked now would be refused before
// it starts, by the rules Sync checks first: the project exists, allows
// the app (CheckApplication), and its sync windows let a sync through now
// (manual: one a person asked for, which windows with manualSync allow).
// The error is Sync's: the unknown project's, a *PolicyError or a
// *SyncWindowError. A host calls it to refuse a sync at once, as Argo CD's
// API server does, rather than report it started; Sync checks again.
func (ops Ops) CheckSync(app *Application, manual bool) error {
	e := ops.e

	proj, err := e.project(app)
	if err != nil {
		return err
	}
	if err := e.checkApplication(proj, app); err != nil {
		return err
	}
	return windowCheck(proj, app, time.Now(), manual)
}

// windowCheck is the *SyncWindowError of a sync of app at now that the
// project's sync windows block, or the error reading them; nil when
// allowed.
func windowCheck(proj *Project, app *Application, now time.Time, manual bool) error {
	d, err := project.SyncAllowed(proj, app, now, manual)
	if err != nil {
		return err
	}
	if !d.Allowed {
		return &SyncWindowError{App: app.Name, Window: *d.Blocking, Reason: d.Reason}
	}
	return nil
}

// SyncWindowError reports a sync that a sync window blocks.
type SyncWindowError struct {
	// App is the application the window blocked.
	App string
	// Window is the sync window that blocks the sync.
	Window SyncWindow
	// Reason says why, for people.
	Reason string
}

// Error implements error.
func (e *SyncWindowError) Error() string {
	return fmt.Sprintf("sync of %s blocked: %s", e.App, e.Reason)
}
