package controller

import (
	"errors"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// PhaseTerminating is the operationState phase with which Argo CD asks
// for a running operation to end (what `argocd app terminate-op` writes
// into status.operationState.phase).
const PhaseTerminating = "Terminating"

// terminationRequested passes, and acts on, status updates that set
// status.operationState.phase to Terminating: the app's operation running
// in the engine is terminated at once (Engine.Terminate: writes in flight
// finish, nothing new starts, SyncFail hooks run), since its reconcile is
// busy with the sync and cannot see the request; the operation then ends
// Failed with "operation terminated" and its reconcile writes that. When
// no operation of the app runs in this process, the update is passed on,
// and the reconcile records the operation as terminated.
func (r *Reconciler) terminationRequested() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectNew == nil || operationPhase(e.ObjectNew) != PhaseTerminating || operationPhase(e.ObjectOld) == PhaseTerminating {
			return false
		}
		key := v1alpha1.AppKey{Namespace: e.ObjectNew.GetNamespace(), Name: e.ObjectNew.GetName()}
		if err := r.opts.Engine.Terminate(key); errors.Is(err, gitops.ErrNoOperation) {
			// The sync may be rendering, not yet registered in the engine:
			// the reconcile running it terminates it once it is.
			r.terminate.Store(key, true)
			return true
		}
		return false
	}}
}

// terminateWhenAsked terminates the app's operation, while done is open,
// once a termination was asked for before the engine registered it.
func (r *Reconciler) terminateWhenAsked(key v1alpha1.AppKey, done <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if _, asked := r.terminate.Load(key); asked && r.opts.Engine.Terminate(key) == nil {
				r.terminate.Delete(key)
				return
			}
		}
	}
}

// terminated is prev with its Terminating operation ended Failed, as a
// terminated sync ends.
func (r *Reconciler) terminated(prev v1alpha1.ApplicationStatus) v1alpha1.ApplicationStatus {
	now := metav1.NewTime(r.now().Truncate(time.Second))
	next := prev
	st := *prev.OperationState
	st.Phase, st.Message, st.FinishedAt = string(sync.Failed), sync.ErrTerminated.Error(), &now
	next.OperationState = &st
	return next
}

// operationPhase is an Application's status.operationState.phase.
func operationPhase(o client.Object) string {
	app, ok := o.(*v1alpha1.Application)
	if !ok || app.Status.OperationState == nil {
		return ""
	}
	return app.Status.OperationState.Phase
}
