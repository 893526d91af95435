package engine

import (
	"errors"

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
// its namespace (sourceNamespaces), sources and destination.
func (e *Engine) checkApplication(proj *Project, app *Application) error {
	return errors.Join(project.CheckSourceNamespace(proj, app.Namespace, e.opts.ControlNamespace), project.CheckApplication(proj, app))
}
