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

// CELCostLimit bounds the cost of one evaluation of one CEL rule
// (project.CELCostLimit).
const CELCostLimit = project.CELCostLimit

type (
	// PolicyError is project.PolicyError: which rule refused what.
	PolicyError = project.PolicyError
	// Policy is project.Policy: a host's own check of every object to
	// apply.
	Policy = project.Policy
	// CELRule is project.CELRule.
	CELRule = project.CELRule
	// CELPolicy is project.CELPolicy.
	CELPolicy = project.CELPolicy
	// WindowDecision is project.WindowDecision.
	WindowDecision = project.WindowDecision
)

// NewCELPolicy compiles CEL rules into a Policy; it is
// project.NewCELPolicy.
func NewCELPolicy(name string, rules ...CELRule) (*CELPolicy, error) {
	return project.NewCELPolicy(name, rules...)
}

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
	errs := []error{project.CheckSourceNamespace(proj, app.Namespace, e.opts.ControlNamespace), project.CheckApplication(proj, app)}
	if proj.Spec.PermitOnlyProjectScopedClusters {
		if cs, err := e.destination(app.Spec.Destination); err == nil {
			c := cs.Config()
			errs = append(errs, project.CheckScopedCluster(proj, e.scopedClusters(proj.Name), app.Spec.Destination, c.Server, c.Name))
		}
	}
	return errors.Join(errs...)
}
