package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
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
func (r *Reconciler) finalize(ctx context.Context, u *unstructured.Unstructured, log logr.Logger) (reconcile.Result, error) {
	fins := u.GetFinalizers()
	propagation := metav1.DeletePropagationForeground
	switch {
	case slices.Contains(fins, FinalizerForeground):
	case slices.Contains(fins, FinalizerBackground):
		propagation = metav1.DeletePropagationBackground
	default:
		return reconcile.Result{}, nil
	}
	app, err := toApplication(u)
	if err == nil {
		var res sync.DeleteResult
		confirmed := deletionApproved(u, u.GetDeletionTimestamp().Time)
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
		next := statusOf(u)
		next.Conditions = append(withoutCondition(next.Conditions, ConditionDeletionError), ApplicationCondition{
			Type: ConditionDeletionError, Message: err.Error(), LastTransitionTime: ptrTime(r.now())})
		if werr := r.writeStatus(ctx, u, next); werr != nil {
			log.Info("cannot record deletion error", "error", werr.Error())
		}
		return reconcile.Result{}, err
	}
	kept := slices.DeleteFunc(slices.Clone(fins), func(f string) bool { return f == FinalizerForeground || f == FinalizerBackground })
	patch, err := finalizersPatch(u.GetResourceVersion(), kept)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.client.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("application %s: remove finalizer: %w", nameOf(u), err)
	}
	return reconcile.Result{}, nil
}

func finalizersPatch(resourceVersion string, fins []string) ([]byte, error) {
	if fins == nil {
		fins = []string{}
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": resourceVersion, "finalizers": fins}})
}

func withoutCondition(cs []ApplicationCondition, typ string) []ApplicationCondition {
	return slices.DeleteFunc(slices.Clone(cs), func(c ApplicationCondition) bool { return c.Type == typ })
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
