package engine

import (
	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/state"

	"context"
	"fmt"
	"time"

	"github.com/kubegitops/gitops/sync"
)

// Resume finishes the app's sync operation that a stopped or crashed
// process left Running in the state store: it renders the commits that
// operation was syncing and continues from its last checkpoint (the
// syncer's state, saved after each wave and before each hook create), so
// finished waves are not applied again and a hook already created is
// adopted, not created a second time. It reports whether there was an
// operation to resume; nothing is done for an app whose operation runs in
// this engine, or whose last operation ended. Run resumes each app before
// its first refresh, and Sync resumes before it starts a new operation.
//
// A state store is one engine's memory: two engines sharing one store for
// the same apps would each resume the other's running operations (run one
// engine per app, as Argo CD runs one application controller per shard).
func (ops Ops) Resume(ctx context.Context, app *Application) (res sync.Result, resumed bool, err error) {
	e := ops.e

	key := e.instanceOf(app)
	e.ops.mu.Lock()
	_, running := e.ops.ops[key]
	e.ops.mu.Unlock()
	if running {
		return sync.Result{}, false, nil
	}
	st, err := e.opts.State.Load(ctx, key)
	if err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, false, fmt.Errorf("resume %s: %w", key, err)
	}
	op := st.Operation
	if !op.Resumable() {
		return sync.Result{}, false, nil
	}
	req := SyncRequest{Revisions: op.Request.Revisions, Prune: op.Request.Prune, ConfirmPrune: op.Request.ConfirmPrune,
		Manual: op.Request.Manual, Resources: op.Request.Resources, SyncOptions: op.Request.SyncOptions,
		State: op.Checkpoint, automated: op.Automated, resumed: true}
	if req.State == nil {
		// Stopped before its first checkpoint (nothing was written yet):
		// the same operation starts over, with its own start time.
		req.State = &sync.State{StartedAt: op.StartedAt.UTC().Truncate(time.Second)}
	}
	e.opts.Log.Info("resuming an interrupted sync", "app", key, "revision", op.Revision, "startedAt", op.StartedAt)
	res, err = e.sync(ctx, app, req, op.StartedAt)
	return res, true, err
}

// checkpointer returns the sync.Request.Checkpoint of an operation: each
// checkpoint replaces the app's running state.OperationState with one that holds
// the syncer's state.
func (e *Engine) checkpointer(ctx context.Context, app *Application, running state.OperationState) func(sync.State) {
	ctx = context.WithoutCancel(ctx)
	return func(st sync.State) {
		op := running
		op.Checkpoint = &st
		e.record(ctx, app, &op, nil)
	}
}

// requestOf is the OperationRequest kept while req runs, with the commits
// rendered.
func requestOf(req SyncRequest, r desired.Desired) *state.OperationRequest {
	if req.DryRun {
		return nil // a dry run writes nothing: there is nothing to finish
	}
	revs := make([]string, len(r.Revisions))
	for i, rev := range r.Revisions {
		revs[i] = rev.Commit
	}
	return &state.OperationRequest{Revisions: revs, Prune: req.Prune, ConfirmPrune: req.ConfirmPrune, Manual: req.Manual,
		Resources: req.Resources, SyncOptions: req.SyncOptions}
}
