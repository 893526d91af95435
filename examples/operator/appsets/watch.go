package appsets

import (
	"context"
	"maps"
	"slices"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// isClusterSecret passes the Argo CD cluster Secrets of the controller's
// namespace.
func (r *Reconciler) isClusterSecret() predicate.Funcs {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == r.opts.ControllerNamespace && o.GetLabels()[appset.SecretTypeLabel] == "cluster"
	})
}

// clusterSetRequests queues the sets whose generators read the cluster
// Secrets when one is added, changed or deleted (Argo CD's
// clusterSecretEventHandler), so a new cluster gets its Applications at
// once.
func (r *Reconciler) clusterSetRequests(ctx context.Context, _ client.Object) []reconcile.Request {
	var sets v1alpha1.ApplicationSetList
	if err := r.client.List(ctx, &sets); err != nil {
		r.opts.Log.Error(err, "list ApplicationSets for a cluster Secret change")
		return nil
	}
	var out []reconcile.Request
	for _, s := range sets.Items {
		if usesClusters(s.Spec.Generators) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
		}
	}
	return out
}

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
