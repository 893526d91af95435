package engine

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DeleteRequest asks for the cascading deletion of an application's
// objects.
type DeleteRequest struct {
	// Propagation is the propagation policy of each delete: Foreground
	// (the default, Argo CD's resources-finalizer) or Background (its
	// resources-finalizer/background).
	Propagation metav1.DeletionPropagation
	// DryRun sends every delete as a server-side dry-run (and runs no
	// hooks).
	DryRun bool
	// ConfirmDelete confirms the deletion of objects marked Delete=confirm
	// (Argo CD's confirmation); without it they wait, listed in the
	// result's PendingConfirmation.
	ConfirmDelete bool
	// SkipHooks deletes without running the app's PreDelete and PostDelete
	// hooks, for an app that can no longer be rendered (its repository is
	// gone). Default false: hooks run, and an app that cannot be rendered
	// is not deleted.
	SkipHooks bool
}

// Delete deletes the live objects an application manages on its
// destination, as Argo CD does when an Application with its resources
// finalizer is deleted: objects found by the app's tracking id, each
// checked against the app's project (and the engine's Policies) before it
// is deleted, Delete=false objects kept, Namespaces and CRDs last. Sync
// windows do not apply: deleting an application is not a sync.
//
// An app whose last successful sync had PreDelete or PostDelete hooks is
// rendered again to run them (state.AppState.DeletionHooks, as Argo CD's
// post-delete finalizer): its PreDelete hooks run first and must succeed
// (a failure stops the deletion with a *DeleteHookError, nothing deleted);
// its PostDelete hooks run once everything else is gone; both with their
// delete policies, as Argo CD runs them. Objects marked Delete=confirm wait for
// DeleteRequest.ConfirmDelete.
//
// Deletion is asynchronous on the server; call Delete until the result is
// Done. The engine's history of the app is forgotten once it is.
func (ops Ops) Delete(ctx context.Context, app *Application, req DeleteRequest) (sync.DeleteResult, error) {
	e := ops.e

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
	var pre, post []*unstructured.Unstructured
	var revision string
	state, err := e.opts.State.Load(ctx, e.instanceOf(app))
	if err != nil {
		return sync.DeleteResult{}, fmt.Errorf("delete %s: %w", app.Name, err)
	}
	if state.DeletionHooks && !req.SkipHooks && !req.DryRun {
		if pre, post, revision, err = e.deletionHooks(ctx, app, cs); err != nil {
			return sync.DeleteResult{}, err
		}
	}
	// PreDelete hooks run (and must succeed) before anything is deleted.
	// The hooks are objects of the app, so once they have run, a later
	// call finds them complete (or deleted by policy) and goes on.
	if len(pre) > 0 {
		st, err := e.opts.State.Load(ctx, e.instanceOf(app))
		if err != nil {
			return sync.DeleteResult{}, fmt.Errorf("delete %s: %w", app.Name, err)
		}
		if !st.Deleting {
			if err := e.runDeletionHooks(ctx, app, syncer, hooks.PreDelete, pre, revision); err != nil {
				return sync.DeleteResult{}, err
			}
			st.Deleting = true
			if err := e.opts.State.Save(ctx, e.instanceOf(app), st); err != nil {
				return sync.DeleteResult{}, fmt.Errorf("delete %s: %w", app.Name, err)
			}
		}
	}
	res, err := syncer.Delete(ctx, sync.DeleteRequest{
		App:           e.instanceOf(app),
		Propagation:   req.Propagation,
		Admit:         e.admission(proj, app),
		DryRun:        req.DryRun,
		ConfirmDelete: req.ConfirmDelete,
	})
	if err != nil {
		return res, fmt.Errorf("delete %s: %w", app.Name, err)
	}
	// PostDelete hooks run once every other object is gone; they are the
	// app's objects too, deleted by their own delete policies.
	if res.Done() && len(post) > 0 {
		if err := e.runDeletionHooks(ctx, app, syncer, hooks.PostDelete, post, revision); err != nil {
			return res, err
		}
	}
	if res.Done() && !req.DryRun {
		e.parts().comparer.Forget(e.instanceOf(app))
		if err := e.opts.State.Delete(ctx, e.instanceOf(app)); err != nil {
			return res, fmt.Errorf("delete %s: %w", app.Name, err)
		}
		e.notify(appstatus.Notification{Type: appstatus.NotifyDeleted, Key: v1alpha1.KeyOf(app)})
	}
	return res, nil
}
