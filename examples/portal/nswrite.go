package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/sync"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The values of Argo CD's protocol between its API server and its
// controller (the operator honours each).
const (
	// finalizerForeground and finalizerBackground make the deletion of an
	// Application delete its objects first (cascade).
	finalizerForeground = "resources-finalizer.argocd.argoproj.io"
	finalizerBackground = "resources-finalizer.argocd.argoproj.io/background"
	// annotationRefresh asks the controller to refresh the app now
	// ("normal" or "hard").
	annotationRefresh = "argocd.argoproj.io/refresh"
	// annotationDeletionApproved (an RFC 3339 time) confirms the objects
	// marked Prune=confirm or Delete=confirm waiting since before it.
	annotationDeletionApproved = "argocd.argoproj.io/deletion-approved"
	// phaseTerminating in status.operationState.phase asks the
	// controller to end the running operation.
	phaseTerminating = "Terminating"
)

// nsWriteTimeout bounds one write to the API server.
const nsWriteTimeout = 30 * time.Second

// errOperationInProgress refuses a sync while the Application's operation
// field is set, as Argo CD does.
var errOperationInProgress = errors.New("another operation is already in progress")

// update applies edit to the Application named name as the API server
// has it now, and writes it (Update, with its resourceVersion: a write
// between the read and the write is read again and edit applied to it).
// It returns the object written. An error of edit is returned as is.
func (b *nsBackend) update(ctx context.Context, name string, edit func(*gitops.Application) error) (*gitops.Application, error) {
	ctx, cancel := context.WithTimeout(ctx, nsWriteTimeout)
	defer cancel()
	var out *gitops.Application
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &v1alpha1.Application{}
		if err := b.cl.Get(ctx, client.ObjectKey{Namespace: b.ns, Name: name}, cur); err != nil {
			return err
		}
		n := cur.DeepCopy()
		if err := edit(n); err != nil {
			return err
		}
		if err := b.cl.Update(ctx, n); err != nil {
			return err
		}
		out = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// create writes a new Application in the namespace.
func (b *nsBackend) create(ctx context.Context, a *gitops.Application) (*gitops.Application, error) {
	ctx, cancel := context.WithTimeout(ctx, nsWriteTimeout)
	defer cancel()
	n := a.DeepCopy()
	n.Namespace = b.ns
	if err := b.cl.Create(ctx, n); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("application %s: already exists", a.Name)
		}
		return nil, err
	}
	return n, nil
}

// delete deletes the Application as Argo CD's API server does: a
// cascading deletion sets the finalizer of its propagation (the operator
// deletes the app's objects, then the finalizer), a non-cascading one
// removes both; confirm also approves the objects marked Delete=confirm.
// It returns once the Application is gone, or ctx ends.
func (b *nsBackend) delete(ctx context.Context, a *gitops.Application, cascade string, confirm bool) error {
	fin := ""
	switch cascade {
	case cascadeForeground:
		fin = finalizerForeground
	case cascadeBackground:
		fin = finalizerBackground
	}
	now := time.Now().UTC().Format(time.RFC3339)
	_, err := b.update(ctx, a.Name, func(n *gitops.Application) error {
		if n.DeletionTimestamp != nil {
			return nil // being deleted: the finalizers may not change
		}
		n.Finalizers = slices.DeleteFunc(n.Finalizers, func(f string) bool { return f == finalizerForeground || f == finalizerBackground })
		if fin != "" {
			n.Finalizers = append(n.Finalizers, fin)
		}
		if confirm {
			if n.Annotations == nil {
				n.Annotations = map[string]string{}
			}
			n.Annotations[annotationDeletionApproved] = now
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("application %s: %w", a.Name, err)
	}
	gone := b.changes(a.Name)
	dctx, cancel := context.WithTimeout(ctx, nsWriteTimeout)
	err = b.cl.Delete(dctx, &v1alpha1.Application{ObjectMeta: a.ObjectMeta})
	cancel()
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("application %s: %w", a.Name, err)
	}
	for {
		if _, ok := b.srv.app(a.Name); !ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("application %s: deletion not done: %w", a.Name, ctx.Err())
		case <-gone:
			gone = b.changes(a.Name)
		}
	}
}

// sync asks the operator for a sync (the operation field, as Argo CD's
// UI asks), and waits for its outcome.
func (b *nsBackend) sync(ctx context.Context, c caller, a *gitops.Application, req gitops.SyncRequest) (sync.Result, error) {
	op := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Prune: req.Prune, DryRun: req.DryRun, SyncOptions: req.SyncOptions},
		InitiatedBy: v1alpha1.OperationInitiator{Username: c.User}}
	switch {
	case len(req.Revisions) == 1:
		op.Sync.Revision = req.Revisions[0]
	case len(req.Revisions) > 1:
		op.Sync.Revisions = req.Revisions
	}
	for _, k := range req.Resources {
		op.Sync.Resources = append(op.Sync.Resources, v1alpha1.SyncOperationResource{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name})
	}
	return b.operate(ctx, a.Name, op, req.ConfirmPrune, nil)
}

// rollback asks for a sync to history entry id's revision and source, as
// Argo CD's rollback does: refused while automated sync is on.
func (b *nsBackend) rollback(ctx context.Context, c caller, a *gitops.Application, id int64, prune bool) (sync.Result, error) {
	var entry *v1alpha1.RevisionHistory
	check := func(n *gitops.Application) error {
		if sp := n.Spec.SyncPolicy; sp != nil && sp.Automated != nil && (sp.Automated.Enabled == nil || *sp.Automated.Enabled) {
			return fmt.Errorf("application %s: rollback cannot be initiated when auto-sync is enabled", n.Name)
		}
		for i := range n.Status.History {
			if n.Status.History[i].ID == id {
				entry = &n.Status.History[i]
				return nil
			}
		}
		return fmt.Errorf("application %s does not have deployment with id %d", n.Name, id)
	}
	if err := check(a); err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, err
	}
	op := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: entry.Revision, Revisions: entry.Revisions, Prune: prune,
		Source: entry.Source, Sources: entry.Sources, SyncStrategy: &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{}}},
		InitiatedBy: v1alpha1.OperationInitiator{Username: c.User}}
	if sp := a.Spec.SyncPolicy; sp != nil {
		op.Sync.SyncOptions = sp.SyncOptions
	}
	return b.operate(ctx, a.Name, op, false, check)
}

// operate writes op to the Application's operation field (refused while
// one is set, or while the app is being deleted; check, when set, is
// asked of the app as read), then waits until the operator has run it:
// the field is cleared by a later generation and status.operationState
// holds a finished operation started since the write.
func (b *nsBackend) operate(ctx context.Context, name string, op v1alpha1.Operation, approve bool, check func(*gitops.Application) error) (sync.Result, error) {
	since := time.Now().Truncate(time.Second)
	written, err := b.update(ctx, name, func(n *gitops.Application) error {
		switch {
		case n.DeletionTimestamp != nil:
			return fmt.Errorf("application %s is deleting", n.Name)
		case n.Operation != nil:
			return fmt.Errorf("application %s: %w", n.Name, errOperationInProgress)
		}
		if check != nil {
			if err := check(n); err != nil {
				return err
			}
		}
		n.Operation = op.DeepCopy()
		if approve {
			if n.Annotations == nil {
				n.Annotations = map[string]string{}
			}
			n.Annotations[annotationDeletionApproved] = since.UTC().Format(time.RFC3339)
		}
		return nil
	})
	if err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, err
	}
	for {
		changed := b.changes(name)
		a, ok := b.srv.app(name)
		if !ok {
			err := fmt.Errorf("application %s: deleted while its operation ran", name)
			return sync.Result{Phase: sync.Error, Message: err.Error()}, err
		}
		if st := a.Status.OperationState; a.Generation > written.Generation && a.Operation == nil && st != nil &&
			sync.OperationPhase(st.Phase).Completed() && !st.StartedAt.Time.Before(since) {
			res := sync.Result{Phase: sync.OperationPhase(st.Phase), Message: st.Message}
			if o := operationOfObject(a); o != nil {
				res.Results = o.Results
			}
			return res, nil
		}
		select {
		case <-ctx.Done():
			return sync.Result{Phase: sync.Running, Message: "the portal stopped waiting"}, ctx.Err()
		case <-changed:
		}
	}
}

// terminate asks the operator to end the running operation, as `argocd
// app terminate-op` does: status.operationState.phase Terminating.
func (b *nsBackend) terminate(ctx context.Context, a *gitops.Application) error {
	if st := a.Status.OperationState; st == nil || st.Phase != string(sync.Running) {
		return fmt.Errorf("application %s: %w", a.Name, gitops.ErrNoOperation)
	}
	ctx, cancel := context.WithTimeout(ctx, nsWriteTimeout)
	defer cancel()
	patch := []byte(`{"status":{"operationState":{"phase":"` + phaseTerminating + `"}}}`)
	obj := &v1alpha1.Application{ObjectMeta: a.ObjectMeta}
	return b.cl.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}

// refresh asks the operator to refresh the app now (the refresh
// annotation, "hard" past its caches).
func (b *nsBackend) refresh(ctx context.Context, a *gitops.Application, hard bool) error {
	ctx, cancel := context.WithTimeout(ctx, nsWriteTimeout)
	defer cancel()
	kind := "normal"
	if hard {
		kind = "hard"
	}
	patch := []byte(`{"metadata":{"annotations":{"` + annotationRefresh + `":"` + kind + `"}}}`)
	obj := &v1alpha1.Application{ObjectMeta: a.ObjectMeta}
	return b.cl.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}
