package appsets

import (
	"context"
	"path"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// ControllerSettings are what Argo CD's ApplicationSet controller takes
// from its command line (argocd-cmd-params-cm applicationsetcontroller.*,
// which the operator reads): they apply to every set served. The SCM
// settings are Options.Generate.SCM and Options.Providers.
type ControllerSettings struct {
	// Policy, when set (create-only, create-update, create-delete, sync),
	// is what every set may do to its Applications
	// (applicationsetcontroller.policy); a set's own
	// spec.syncPolicy.applicationsSync wins only with PolicyOverride.
	// Empty: each set's own policy.
	Policy string
	// PolicyOverride lets a set's spec.syncPolicy.applicationsSync win over
	// Policy (applicationsetcontroller.enable.policy.override).
	PolicyOverride bool
	// ProgressiveSyncs runs RollingSync strategies
	// (applicationsetcontroller.enable.progressive.syncs); without it a
	// set's strategy is ignored, as in Argo CD, and its Applications keep
	// their template's automated sync.
	ProgressiveSyncs bool
	// Namespaces, when set, are the namespaces (globs) whose sets are
	// served (applicationsetcontroller.namespaces); the others are left
	// alone. Empty: every namespace the manager's cache holds.
	Namespaces []string
	// PreservedAnnotations and PreservedLabels are the annotations and
	// labels of a generated Application a set's update keeps as they are
	// (applicationsetcontroller.global.preserved.*), beside those the
	// reconciler always keeps.
	PreservedAnnotations, PreservedLabels []string
	// MaxStatusResources bounds the resources a set's status lists
	// (applicationsetcontroller.status.max.resources.count); 0: no bound.
	MaxStatusResources int
	// DryRun generates sets and writes their status, but writes no
	// Application (applicationsetcontroller.dryrun).
	DryRun bool
	// RateLimiter, when set, paces the retries of failing sets
	// (applicationsetcontroller.wq.*). Nil: controller-runtime's default.
	RateLimiter workqueue.TypedRateLimiter[reconcile.Request]
}

// serves reports whether the set's namespace is one Settings.Namespaces
// lets this reconciler serve.
func (r *Reconciler) serves(namespace string) bool {
	ns := r.opts.Settings.Namespaces
	if len(ns) == 0 {
		return true
	}
	for _, p := range ns {
		if ok, err := path.Match(p, namespace); err == nil && ok {
			return true
		}
	}
	return false
}

// rollingSync reports whether the set rolls out step by step: its
// strategy is RollingSync and progressive syncs are on.
func (r *Reconciler) rollingSync(set *v1alpha1.ApplicationSet) bool {
	return r.opts.Settings.ProgressiveSyncs && rollingSync(set)
}

// policyOf is what the set may do to its Applications: its own
// spec.syncPolicy, unless Settings.Policy is set and Settings.PolicyOverride
// does not let the set's applicationsSync win.
func (r *Reconciler) policyOf(set *v1alpha1.ApplicationSet) policy {
	pol := policyOf(set)
	p := r.opts.Settings.Policy
	if p == "" {
		return pol
	}
	if sp := set.Spec.SyncPolicy; r.opts.Settings.PolicyOverride && sp != nil && sp.ApplicationsSync != nil && *sp.ApplicationsSync != "" {
		return pol
	}
	pol.update = p == v1alpha1.ApplicationsSyncSync || p == v1alpha1.ApplicationsSyncCreateUpdate
	pol.delete = p == v1alpha1.ApplicationsSyncSync || p == v1alpha1.ApplicationsSyncCreateDelete
	return pol
}

// dryRunClient writes no Application (Settings.DryRun): creates, updates,
// patches and deletes of Applications succeed without reaching the API
// server; every other call passes.
type dryRunClient struct {
	client.Client
}

func isApp(o client.Object) bool {
	_, ok := o.(*v1alpha1.Application)
	return ok
}

// Create creates o unless it is an Application, which it only
// pretends to create.
func (c dryRunClient) Create(ctx context.Context, o client.Object, opts ...client.CreateOption) error {
	if isApp(o) {
		return nil
	}
	return c.Client.Create(ctx, o, opts...)
}

// Update updates o unless it is an Application, which it only
// pretends to update.
func (c dryRunClient) Update(ctx context.Context, o client.Object, opts ...client.UpdateOption) error {
	if isApp(o) {
		return nil
	}
	return c.Client.Update(ctx, o, opts...)
}

// Patch patches o unless it is an Application, which it only
// pretends to patch.
func (c dryRunClient) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.PatchOption) error {
	if isApp(o) {
		return nil
	}
	return c.Client.Patch(ctx, o, p, opts...)
}

// Delete deletes o unless it is an Application, which it only
// pretends to delete.
func (c dryRunClient) Delete(ctx context.Context, o client.Object, opts ...client.DeleteOption) error {
	if isApp(o) {
		return nil
	}
	return c.Client.Delete(ctx, o, opts...)
}
