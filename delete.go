package gitops

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeleteRequest asks for the cascading deletion of an application's
// objects.
type DeleteRequest struct {
	// Propagation is the propagation policy of each delete: Foreground
	// (the default, Argo CD's resources-finalizer) or Background (its
	// resources-finalizer/background).
	Propagation metav1.DeletionPropagation
	// DryRun sends every delete as a server-side dry-run.
	DryRun bool
}

// Delete deletes the live objects an application manages on its
// destination, as Argo CD does when an Application with its resources
// finalizer is deleted: objects found by the app's tracking id, each
// checked against the app's project (and the engine's Policies) before it
// is deleted, Delete=false objects kept, Namespaces and CRDs last. Sync
// windows do not apply: deleting an application is not a sync.
//
// Deletion is asynchronous on the server; call Delete until the result is
// Done. The engine's history of the app is forgotten once it is.
func (e *Engine) Delete(ctx context.Context, app *Application, req DeleteRequest) (sync.DeleteResult, error) {
	proj, err := e.project(app)
	if err != nil {
		return sync.DeleteResult{}, fmt.Errorf("delete %s: %w", app.Name, err)
	}
	cs, err := e.cluster(ctx, app.Spec.Destination)
	if err != nil {
		return sync.DeleteResult{}, fmt.Errorf("delete %s: %w", app.Name, err)
	}
	syncer, err := e.syncerFor(cs, proj, app)
	if err != nil {
		return sync.DeleteResult{}, fmt.Errorf("delete %s: %w", app.Name, err)
	}
	res, err := syncer.Delete(ctx, sync.DeleteRequest{
		App:         app.Name,
		Propagation: req.Propagation,
		Admit:       proj.Admission(app, e.opts.Policies...),
		DryRun:      req.DryRun,
	})
	if err != nil {
		return res, fmt.Errorf("delete %s: %w", app.Name, err)
	}
	if res.Done() && !req.DryRun {
		e.mu.Lock()
		delete(e.differs, app.Name)
		e.mu.Unlock()
		if err := e.opts.State.Delete(ctx, app.Name); err != nil {
			return res, fmt.Errorf("delete %s: %w", app.Name, err)
		}
	}
	return res, nil
}
