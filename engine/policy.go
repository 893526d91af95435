package engine

import (
	"errors"
	"time"

	"github.com/kubegitops/gitops/project"
	"k8s.io/client-go/rest"
)

// Project rules live in package project; these names keep the engine's
// API.

// ErrPolicy is wrapped by every *PolicyError (project.ErrPolicy).
var ErrPolicy = project.ErrPolicy

type (
	// PolicyError is project.PolicyError: which rule refused what.
	PolicyError = project.PolicyError
	// Policy is project.Policy: a host's own check of every object to
	// apply.
	Policy = project.Policy
	// WindowDecision is project.WindowDecision.
	WindowDecision = project.WindowDecision
)

// ImpersonatedConfig returns a copy of cfg that acts as a service account;
// it is project.ImpersonatedConfig.
func ImpersonatedConfig(cfg *rest.Config, namespace, name string) *rest.Config {
	return project.ImpersonatedConfig(cfg, namespace, name)
}

// checkApplication applies the project's rules for the application itself:
// its namespace (sourceNamespaces), sources and destination (resolved,
// withResolvedDestination).
func (e *Engine) checkApplication(proj *Project, app *Application) error {
	return errors.Join(project.CheckSourceNamespace(proj, app.Namespace, e.opts.ControlNamespace),
		project.CheckApplication(proj, e.withResolvedDestination(app)))
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
func (e *Engine) CheckApplication(app *Application) error {
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
func (e *Engine) CheckSync(app *Application, manual bool) error {
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

// withResolvedDestination is app, or a copy whose destination carries both
// the server and the name of the configured cluster it names (by either):
// a project's destinations match a cluster by its server or its name,
// whichever the app gave. A cluster not configured leaves app as it is.
func (e *Engine) withResolvedDestination(app *Application) *Application {
	d := app.Spec.Destination
	cs, err := e.destination(d)
	if err != nil || (d.Server == cs.Config().Server && d.Name == cs.Name()) {
		return app
	}
	out := *app
	out.Spec.Destination.Server, out.Spec.Destination.Name = cs.Config().Server, cs.Name()
	return &out
}
