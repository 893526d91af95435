package appsets

import (
	"maps"
	"slices"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// lifecycleChanged passes updates of a set that start its deletion or
// change its finalizers.
func lifecycleChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return false
		}
		return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil) ||
			!slices.Equal(e.ObjectOld.GetFinalizers(), e.ObjectNew.GetFinalizers())
	}}
}

// appChanged passes the changes of an owned Application the set acts on:
// its creation and deletion, its spec or operation (generation), labels,
// annotations, finalizers, ownerReferences and deletion, and the sync,
// health and operation phase of its status (for status.resources and the
// rollout), but not a status write that only moved reconciledAt.
func appChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*v1alpha1.Application)
		n, ok2 := e.ObjectNew.(*v1alpha1.Application)
		if !ok1 || !ok2 {
			return true
		}
		if o.Generation != n.Generation || !maps.Equal(o.Labels, n.Labels) || !maps.Equal(o.Annotations, n.Annotations) ||
			!slices.Equal(o.Finalizers, n.Finalizers) || len(o.OwnerReferences) != len(n.OwnerReferences) ||
			(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
			return true
		}
		if o.Status.Sync.Status != n.Status.Sync.Status || o.Status.Sync.Revision != n.Status.Sync.Revision ||
			o.Status.Health.Status != n.Status.Health.Status || o.Status.Health.Message != n.Status.Health.Message {
			return true
		}
		return opPhase(o) != opPhase(n)
	}}
}

// opPhase identifies an Application's last operation and its phase.
func opPhase(a *v1alpha1.Application) string {
	s := a.Status.OperationState
	if s == nil {
		return ""
	}
	return s.StartedAt.String() + "/" + s.Phase
}
