package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/state"
	"github.com/kubegitops/gitops/sync"
)

// operationStateOf records a finished operation.
func operationStateOf(res sync.Result, revision string, started time.Time, automated, dryRun bool) *state.OperationState {
	op := &state.OperationState{Phase: res.Phase, Message: res.Message, Revision: revision, Automated: automated,
		DryRun: dryRun, StartedAt: started, FinishedAt: time.Now()}
	rows := res.Results
	if len(rows) > state.MaxOperationResults {
		kept := make([]sync.ResourceResult, 0, state.MaxOperationResults)
		for _, failedFirst := range []bool{true, false} {
			for _, r := range rows {
				if len(kept) == state.MaxOperationResults {
					break
				}
				if (r.Status == sync.TaskFailed) == failedFirst {
					kept = append(kept, r)
				}
			}
		}
		op.Truncated = len(rows) - len(kept)
		rows = kept
	}
	op.Results = rows
	return op
}

// UpdateAppState changes the record the engine keeps of the app of key
// (Options.State): it loads the record, hands it
// to update and, when update reports a change, saves it. It holds the lock
// the engine's own writes of records take (operations, history), so an
// add-on that keeps a field of the record (the image updater's held
// override) and the engine never lose each other's writes. When update
// returns an error nothing is saved and the error is returned; a store
// that fails is an error naming the app.
func (apps Apps) UpdateAppState(ctx context.Context, key v1alpha1.AppKey, update func(*state.AppState) (changed bool, err error)) error {
	e := apps.e

	e.stateMu.Lock()
	defer e.stateMu.Unlock()
	name := e.instanceName(key)
	st, err := e.opts.State.Load(ctx, name)
	if err != nil {
		return fmt.Errorf("application %q: load its state: %w", key.String(), err)
	}
	changed, err := update(&st)
	if err != nil || !changed {
		return err
	}
	if err := e.opts.State.Save(ctx, name, st); err != nil {
		return fmt.Errorf("application %q: save its state: %w", key.String(), err)
	}
	return nil
}
