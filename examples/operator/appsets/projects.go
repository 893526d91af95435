package appsets

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/engine"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// MissingProjectError is why a generated Application is not written: it
// names a project the engine does not have. The message is Argo CD's.
type MissingProjectError struct {
	// Project is the name the Application gives.
	Project string
}

// Error implements error.
func (e *MissingProjectError) Error() string {
	return fmt.Sprintf("application references project %s which does not exist", e.Project)
}

// checkProject refuses a generated Application whose project the engine
// does not have (or has refused), as Argo CD's ApplicationSet controller
// does before writing it.
func (r *Reconciler) checkProject(set *v1alpha1.ApplicationSet, app *v1alpha1.Application) error {
	_, err := r.opts.Engine.Settings().Project(app.Spec.Project)
	var missing *engine.MissingProjectError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &missing):
		return &Error{Set: keyOf(set), App: app.Name, Err: &MissingProjectError{Project: missing.Project}}
	default:
		return &Error{Set: keyOf(set), App: app.Name, Err: err}
	}
}

// projectHandler loads the projects on every AppProject event and queues
// every set, whose Applications may name the project that changed.
func (r *Reconciler) projectHandler() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		if _, err := r.opts.Projects.Load(ctx); err != nil {
			r.opts.Log.Error(err, "AppProjects not read")
		}
		sets := &v1alpha1.ApplicationSetList{}
		if err := r.opts.Projects.Reader.List(ctx, sets); err != nil {
			r.opts.Log.Error(err, "ApplicationSets not listed after a project changed")
			return nil
		}
		out := make([]reconcile.Request, 0, len(sets.Items))
		for _, s := range sets.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
		}
		return out
	})
}
