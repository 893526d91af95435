package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// windowRecheck is how often an automated sync that a sync window blocks
// is tried again.
const windowRecheck = 30 * time.Second

// pendingRecheck is how often an operation that waits (for a prune
// confirmation) is run again.
const pendingRecheck = 10 * time.Second

// runOperation runs the operation the resource asks for, once: it records
// the operation as Running, syncs, records the outcome in
// status.operationState (and status.history), and then removes the
// operation field, guarded by the resourceVersion so that an operation
// written meanwhile is not lost. An operation that waits for a prune
// confirmation stays and is run again later; so does one a sync window
// blocks, Running with Argo CD's message until a window lets it through.
func (r *Reconciler) runOperation(ctx context.Context, app *v1alpha1.Application, op v1alpha1.Operation, log logr.Logger) (reconcile.Result, error) {
	prev := app.Status
	var next v1alpha1.ApplicationStatus
	if s := prev.OperationState; s != nil && s.Phase == PhaseTerminating {
		// Asked to terminate while no sync of it ran here (the process
		// that ran it is gone): the operation ends terminated.
		next = r.terminated(prev)
	} else if op.Sync == nil {
		now := metav1.NewTime(r.now().Truncate(time.Second))
		next = prev
		next.OperationState = &v1alpha1.OperationState{Operation: op, Phase: string(sync.Error),
			Message: "only sync operations are supported", StartedAt: now, FinishedAt: &now}
	} else {
		var res sync.Result
		var err error
		next, res, err = r.sync(ctx, app, op, prev)
		var blocked *engine.SyncWindowError
		if errors.As(err, &blocked) {
			// As Argo CD's controller: a requested sync that a sync window
			// blocks stays Running, says so, and runs once a window lets
			// it through.
			log.Info("Sync prevented by sync window", "reason", blocked.Reason)
			if err := r.writeStatus(ctx, app, windowBlocked(next)); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{RequeueAfter: windowRecheck}, nil
		}
		if err != nil {
			log.Info("sync operation failed", "error", err.Error())
		}
		if res.Phase == sync.Running {
			if err := r.writeStatus(ctx, app, next); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{RequeueAfter: pendingRecheck}, nil
		}
	}
	if err := r.writeStatus(ctx, app, next); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.clearOperation(ctx, app); err != nil {
		return reconcile.Result{}, err
	}
	// Clearing the operation changed the generation: the app is reconciled
	// again at once and its status refreshed.
	return reconcile.Result{}, nil
}

// windowBlockedMessage is Argo CD's operation message for a requested sync
// that a sync window blocks.
const windowBlockedMessage = "Sync operation blocked by sync window"

// windowBlocked is st, the outcome of a requested sync that a sync window
// refused, with the operation kept Running as Argo CD keeps it.
func windowBlocked(st v1alpha1.ApplicationStatus) v1alpha1.ApplicationStatus {
	op := *st.OperationState
	op.Phase, op.Message, op.FinishedAt = string(sync.Running), windowBlockedMessage, nil
	st.OperationState = &op
	return st
}

// autoSync runs an automated sync when autosync.Decide says so (the
// engine's run loop follows the same rules), with the record it needs
// taken from status.operationState, so the rules survive restarts. It
// returns the status with the operation's outcome, a wait when the
// decision may change by time alone, and whether a sync ran.
func (r *Reconciler) autoSync(ctx context.Context, app *v1alpha1.Application, st appstatus.Status, next v1alpha1.ApplicationStatus, log logr.Logger) (v1alpha1.ApplicationStatus, time.Duration, bool, error) {
	p := app.Spec.SyncPolicy
	var last *autosync.Record
	if prev := next.OperationState; prev != nil && prev.Phase != string(sync.Running) && prev.SyncResult != nil {
		rec := autosync.Record{Revision: appstatus.JoinRevisions(prev.SyncResult),
			Failed: prev.Phase == string(sync.Failed) || prev.Phase == string(sync.Error), Message: prev.Message, At: prev.StartedAt.Time}
		if prev.Operation.Sync != nil {
			rec.Heals = int(prev.Operation.Sync.SelfHealAttemptsCount)
		}
		rec.Sources = prev.SyncResult.Sources
		if s := prev.SyncResult.Source; s != nil {
			rec.Sources = []v1alpha1.ApplicationSource{*s}
		}
		last = &rec
	}
	tm := r.times()
	d := autosync.Decide(autosync.Input{Policy: p, Status: st, Sources: app.Spec.AllSources(), Last: last, Now: r.now(), SelfHealTimeout: tm.SelfHealTimeout, Backoff: tm.SelfHealBackoff})
	if d.Condition != nil {
		// Why automated sync does not run (its last attempt of this
		// revision failed) is a condition, not only the operation state.
		next.Conditions = appstatus.Conditions(app.Status.Conditions, append(slices.Clone(st.Conditions), *d.Condition), r.now())
	}
	if !d.Sync {
		if d.Wait > 0 && d.HealAttempt > 0 {
			// As Argo CD's controller logs it: the app stays OutOfSync
			// after a Succeeded sync until the self-heal is due.
			log.Info("Skipping auto-sync: "+d.Reason, "revision", st.Revision)
		}
		return next, d.Wait, false, nil
	}
	log.Info(autosync.StartedMessage(st.Revision, d.HealAttempt))
	op := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Prune: p.Automated.Prune, SelfHealAttemptsCount: int64(d.Next.Heals)},
		InitiatedBy: v1alpha1.OperationInitiator{Automated: true}}
	before := next
	synced, _, err := r.sync(ctx, app, op, next)
	var blocked *engine.SyncWindowError
	if errors.As(err, &blocked) {
		// Automated syncs wait for the window; the status says which.
		before.Conditions = appstatus.Conditions(app.Status.Conditions, append(slices.Clone(st.Conditions),
			appstatus.Condition{Type: appstatus.ConditionSyncWindowBlocked, Message: blocked.Error()}), r.now())
		return before, windowRecheck, false, nil
	}
	if err != nil {
		log.Info("automated sync failed", "revision", st.Revision, "error", err.Error())
	}
	if synced.OperationState.SyncResult != nil && appstatus.JoinRevisions(synced.OperationState.SyncResult) == "" {
		// A sync that failed before it rendered is remembered against the
		// revision it meant to sync, so it is not retried in a loop.
		synced.OperationState.SyncResult.Revision, synced.OperationState.SyncResult.Revisions = appstatus.SplitRevision(st.Revision, len(app.Spec.AllSources()))
	}
	return synced, 0, true, nil
}

// sync runs op with the engine and returns base with the operation's
// outcome (and a history entry after a successful, real sync). A requested
// operation is first written as Running, so that people see it; an
// automated one is not, so that a sync window that blocks it again and
// again does not make the controller write twice each time.
func (r *Reconciler) sync(ctx context.Context, app *v1alpha1.Application, op v1alpha1.Operation, base v1alpha1.ApplicationStatus) (v1alpha1.ApplicationStatus, sync.Result, error) {
	key := v1alpha1.KeyOf(app)
	r.terminate.Delete(key) // asked of an earlier operation
	started := metav1.NewTime(r.now().Truncate(time.Second))
	if prev := base.OperationState; prev != nil && prev.Phase == string(sync.Running) && !op.InitiatedBy.Automated {
		started = prev.StartedAt // the same operation, run again while it waits for a confirmation
	}
	running := base
	running.OperationState = &v1alpha1.OperationState{Operation: op, Phase: string(sync.Running), Message: "syncing", StartedAt: started}
	if !op.InitiatedBy.Automated {
		if err := r.writeStatus(ctx, app, running); err != nil {
			return base, sync.Result{Phase: sync.Error, Message: err.Error()}, err
		}
	}
	if !op.InitiatedBy.Automated {
		// A sync someone asked for reads the branches and tags afresh,
		// as Argo CD's sync compares with noRevisionCache: a branch
		// moved a moment ago (a promoted hydrateTo branch, a push the
		// poll has not seen) is synced at its new commit, not at the one
		// the resolve cache still holds.
		for _, src := range app.Spec.AllSources() {
			r.opts.Engine.Apps().Invalidate(src.RepoURL)
		}
	}
	req := gitops.SyncRequest{Prune: op.Sync.Prune, DryRun: op.Sync.DryRun, SyncOptions: op.Sync.SyncOptions,
		Manual: !op.InitiatedBy.Automated, ConfirmPrune: deletionApproved(app, started.Time)}
	switch {
	case len(op.Sync.Revisions) > 0:
		req.Revisions = op.Sync.Revisions
	case op.Sync.Revision != "":
		req.Revisions = []string{op.Sync.Revision}
	}
	for _, res := range op.Sync.Resources {
		req.Resources = append(req.Resources, resource.Key{Group: res.Group, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name})
	}
	done := make(chan struct{})
	go r.terminateWhenAsked(key, done)
	res, err := r.opts.Engine.Sync(ctx, app, req)
	close(done)
	r.terminate.Delete(key)
	return r.outcome(app, running, res, err), res, err
}

// outcome is running (the status with the operation recorded as Running)
// with the operation's result, and a history entry after a successful,
// real sync.
func (r *Reconciler) outcome(app *v1alpha1.Application, running v1alpha1.ApplicationStatus, res sync.Result, err error) v1alpha1.ApplicationStatus {
	sources := len(app.Spec.AllSources())
	op, started := running.OperationState.Operation, running.OperationState.StartedAt
	finished := metav1.NewTime(r.now().Truncate(time.Second))
	state := *running.OperationState
	state.Phase, state.Message = string(res.Phase), res.Message
	if state.Phase == "" {
		state.Phase = string(sync.Error)
	}
	if err != nil && state.Message == "" {
		state.Message = err.Error()
	}
	if state.Message == "" && res.Phase == sync.Succeeded {
		state.Message = "successfully synced"
	}
	state.SyncResult = appstatus.SyncResult(res, sources)
	state.SyncResult.Source, state.SyncResult.Sources = syncedSources(app, op.Sync)
	out := running
	if res.Phase != sync.Running {
		state.FinishedAt = &finished
	}
	if res.Phase == sync.Succeeded && (op.Sync == nil || !op.Sync.DryRun) {
		entry := v1alpha1.RevisionHistory{Revision: state.SyncResult.Revision, Revisions: state.SyncResult.Revisions,
			Source: state.SyncResult.Source, Sources: state.SyncResult.Sources,
			DeployStartedAt: &started, DeployedAt: finished, InitiatedBy: op.InitiatedBy}
		out.History = appstatus.WithHistory(running.History, entry, app.Spec.RevisionHistoryLimit)
	}
	out.OperationState = &state
	return out
}

// resume finishes, before the app's first refresh in this process, a sync
// operation that a killed operator left in the engine's StateStore
// (Engine.Resume; -state-namespace keeps it in ConfigMaps): its outcome is
// written as the app's operationState and history, and when it was the
// Application's requested operation, that operation is cleared as a
// finished one would be (so it is not run a second time). It reports
// false when there was nothing to resume.
func (r *Reconciler) resume(ctx context.Context, app *v1alpha1.Application, log logr.Logger) (reconcile.Result, bool, error) {
	res, resumed, err := r.opts.Engine.Resume(ctx, app)
	if !resumed {
		if err != nil {
			log.Info("cannot look for an interrupted operation", "error", err.Error())
		}
		return reconcile.Result{}, false, nil
	}
	log.Info("resumed an interrupted sync", "phase", string(res.Phase))
	prev, op := app.Status, app.Operation
	running := prev
	now := metav1.NewTime(r.now().Truncate(time.Second))
	switch {
	case prev.OperationState != nil && prev.OperationState.Phase == string(sync.Running):
		st := *prev.OperationState // a requested operation, written as Running when it began
		running.OperationState = &st
	case op != nil:
		running.OperationState = &v1alpha1.OperationState{Operation: *op, Phase: string(sync.Running), StartedAt: now}
	default:
		// An automated sync is not written as Running before it ends.
		running.OperationState = &v1alpha1.OperationState{Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{},
			InitiatedBy: v1alpha1.OperationInitiator{Automated: true}}, Phase: string(sync.Running), StartedAt: now}
	}
	next := r.outcome(app, running, res, err)
	if err := r.writeStatus(ctx, app, next); err != nil {
		return reconcile.Result{}, true, err
	}
	if op != nil && res.Phase != sync.Running {
		if err := r.clearOperation(ctx, app); err != nil {
			return reconcile.Result{}, true, err
		}
	}
	return reconcile.Result{RequeueAfter: time.Second}, true, nil
}

// clearOperation removes the app's finished operation, guarded by the
// resourceVersion so that an operation written meanwhile is not lost. An
// app deleted meanwhile is not an error.
func (r *Reconciler) clearOperation(ctx context.Context, app *v1alpha1.Application) error {
	orig := app.DeepCopy()
	app.Operation = nil
	if err := r.client.Patch(ctx, app, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("application %s: clear operation: %w", nameOf(app), err)
	}
	r.remember(app)
	return nil
}

// syncedSources are the sources a sync ran with, as Argo CD records them in
// syncResult and the history: the operation's own (a rollback's), else the
// app's spec; a copy.
func syncedSources(app *v1alpha1.Application, op *v1alpha1.SyncOperation) (*v1alpha1.ApplicationSource, []v1alpha1.ApplicationSource) {
	src, srcs := app.Spec.Source, app.Spec.Sources
	if op != nil && (op.Source != nil || len(op.Sources) > 0) {
		src, srcs = op.Source, op.Sources
	}
	if len(srcs) > 0 {
		out := make([]v1alpha1.ApplicationSource, len(srcs))
		for i := range srcs {
			srcs[i].DeepCopyInto(&out[i])
		}
		return nil, out
	}
	return src.DeepCopy(), nil
}
