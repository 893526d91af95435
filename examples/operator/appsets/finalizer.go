package appsets

import (
	"context"
	"fmt"
	"slices"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// needsFinalizer reports whether deleting the set must do more than let
// the garbage collector delete its Applications with their finalizers.
func (r *Reconciler) needsFinalizer(set *v1alpha1.ApplicationSet) bool {
	p := r.policyOf(set)
	return !p.delete || p.preserve
}

// keepFinalizer adds Finalizer to a set that needs it and removes it from
// one that no longer does.
func (r *Reconciler) keepFinalizer(ctx context.Context, set *v1alpha1.ApplicationSet) error {
	has := slices.Contains(set.Finalizers, Finalizer)
	want := r.needsFinalizer(set)
	if has == want {
		return nil
	}
	next := set.DeepCopy()
	if want {
		next.Finalizers = append(next.Finalizers, Finalizer)
	} else {
		next.Finalizers = slices.DeleteFunc(next.Finalizers, func(f string) bool { return f == Finalizer })
	}
	if err := r.client.Patch(ctx, next, client.MergeFromWithOptions(set, client.MergeFromWithOptimisticLock{})); err != nil {
		return &Error{Set: keyOf(set), Err: fmt.Errorf("finalizer: %w", err)}
	}
	*set = *next
	return nil
}

// finalize lets a deleted set's Applications go as its policy says, then
// removes Finalizer: without deletion in the policy the Applications lose
// their ownerReference to the set and stay; with
// preserveResourcesOnDeletion they lose their resources finalizers, so
// the garbage collector deletes them and not their objects.
func (r *Reconciler) finalize(ctx context.Context, set *v1alpha1.ApplicationSet) error {
	if !slices.Contains(set.Finalizers, Finalizer) {
		return nil
	}
	r.runner.Forget(set.Namespace, set.Name)
	owned, err := r.ownedApps(ctx, set)
	if err != nil {
		return err
	}
	p := r.policyOf(set)
	for _, app := range owned {
		switch {
		case !p.delete:
			next := app.DeepCopy()
			next.OwnerReferences = slices.DeleteFunc(next.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == set.UID })
			if err := r.client.Patch(ctx, next, client.MergeFromWithOptions(app, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
				return &Error{Set: keyOf(set), App: app.Name, Err: fmt.Errorf("remove the ownerReference: %w", err)}
			}
		case p.preserve:
			if err := r.dropResourcesFinalizers(ctx, app); err != nil && !apierrors.IsNotFound(err) {
				return &Error{Set: keyOf(set), App: app.Name, Err: err}
			}
		}
	}
	next := set.DeepCopy()
	next.Finalizers = slices.DeleteFunc(next.Finalizers, func(f string) bool { return f == Finalizer })
	if err := r.client.Patch(ctx, next, client.MergeFromWithOptions(set, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return &Error{Set: keyOf(set), Err: fmt.Errorf("remove the finalizer: %w", err)}
	}
	return nil
}
