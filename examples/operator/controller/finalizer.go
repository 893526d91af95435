package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Argo CD's finalizers for cascading deletion: with either, deleting the
// Application deletes the objects it manages first.
const (
	// FinalizerForeground deletes each object with foreground propagation
	// (its dependents before it).
	FinalizerForeground = "resources-finalizer.argocd.argoproj.io"
	// FinalizerBackground deletes each object with background propagation
	// (the garbage collector removes its dependents afterwards).
	FinalizerBackground = "resources-finalizer.argocd.argoproj.io/background"
)

// deletionRecheck is how soon a deletion that waits for objects to go is
// looked at again (changes of the objects also queue the app at once).
const deletionRecheck = 2 * time.Second

// ConditionDeletionError reports a cascading deletion that cannot proceed.
const ConditionDeletionError = "DeletionError"

// finalize runs the cascading deletion of an Application being deleted:
// without one of Argo CD's resources finalizers there is nothing to do and
// the objects stay; with one, the engine deletes the app's objects (call
// after call, until none is left or terminating), and then the finalizer
// is removed so the Application goes. Objects marked Delete=false are kept.
// An error is written as a DeletionError condition and retried with
// backoff; the Application stays until the deletion succeeds or a person
// removes the finalizer.
func (r *Reconciler) finalize(ctx context.Context, app *v1alpha1.Application, log logr.Logger) (reconcile.Result, error) {
	fins := app.Finalizers
	propagation := metav1.DeletePropagationForeground
	switch {
	case slices.Contains(fins, FinalizerForeground):
	case slices.Contains(fins, FinalizerBackground):
		propagation = metav1.DeletePropagationBackground
	default:
		return reconcile.Result{}, nil
	}
	err := app.Validate()
	if err == nil {
		var res sync.DeleteResult
		confirmed := deletionApproved(app, app.DeletionTimestamp.Time)
		res, err = r.opts.Engine.Delete(ctx, app, gitops.DeleteRequest{Propagation: propagation, ConfirmDelete: confirmed})
		if err == nil && len(res.PendingConfirmation) > 0 {
			log.Info("deletion waits for confirmation", "annotation", AnnotationDeletionApproved, "objects", keys(res.PendingConfirmation))
		}
		if err == nil && !res.Done() {
			log.V(1).Info("deleting objects", "deleted", len(res.Deleted), "remaining", len(res.Remaining))
			return reconcile.Result{RequeueAfter: deletionRecheck}, nil
		}
		if err == nil && len(res.Kept) > 0 {
			log.Info("objects kept (Delete=false)", "objects", keys(res.Kept))
		}
	}
	if err != nil {
		next := app.Status
		next.Conditions = append(withoutCondition(next.Conditions, ConditionDeletionError), v1alpha1.ApplicationCondition{
			Type: ConditionDeletionError, Message: err.Error(), LastTransitionTime: ptrTime(r.now())})
		if werr := r.writeStatus(ctx, app, next); werr != nil {
			log.Info("cannot record deletion error", "error", werr.Error())
		}
		return reconcile.Result{}, err
	}
	// Guarded by the resourceVersion: a finalizer added meanwhile stays.
	orig := app.DeepCopy()
	app.Finalizers = slices.DeleteFunc(app.Finalizers, func(f string) bool { return f == FinalizerForeground || f == FinalizerBackground })
	if err := r.client.Patch(ctx, app, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("application %s: remove finalizer: %w", nameOf(app), err)
	}
	r.forget(client.ObjectKeyFromObject(app)) // the Application goes
	return reconcile.Result{}, nil
}

func withoutCondition(cs []v1alpha1.ApplicationCondition, typ string) []v1alpha1.ApplicationCondition {
	return slices.DeleteFunc(slices.Clone(cs), func(c v1alpha1.ApplicationCondition) bool { return c.Type == typ })
}

func keys(ks []resource.Key) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.String()
	}
	return strings.Join(s, ", ")
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t.Truncate(time.Second))
	return &mt
}
