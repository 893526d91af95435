package engine

import (
	"context"
	"errors"

	"github.com/kubegitops/gitops/project"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
