package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/kubegitops/gitops/state"
	"github.com/kubegitops/gitops/sync"
	"k8s.io/client-go/kubernetes"
)

// The state stores live in package state, below the engine; these aliases
// keep the old names for one release.
type (
	// StateStore keeps what the engine must remember of an app beyond one
	// process.
	//
	// Deprecated: use state.Store.
	StateStore = state.Store
	// AppState is what a StateStore keeps per app.
	//
	// Deprecated: use state.AppState.
	AppState = state.AppState
	// OperationState is a sync operation as the engine records it.
	//
	// Deprecated: use state.OperationState.
	OperationState = state.OperationState
	// OperationRequest is what a sync operation was asked to do.
	//
	// Deprecated: use state.OperationRequest.
	OperationRequest = state.OperationRequest
	// MemoryStateStore keeps app state in memory.
	//
	// Deprecated: use state.MemoryStore.
	MemoryStateStore = state.MemoryStore
	// ConfigMapStateStore keeps each app's state in a ConfigMap.
	//
	// Deprecated: use state.ConfigMapStore.
	ConfigMapStateStore = state.ConfigMapStore
)

// MaxOperationResults bounds the rows an OperationState keeps.
//
// Deprecated: use state.MaxOperationResults.
const MaxOperationResults = state.MaxOperationResults

// NewMemoryStateStore returns an empty in-memory store.
//
// Deprecated: use state.NewMemoryStore.
func NewMemoryStateStore() *MemoryStateStore { return state.NewMemoryStore() }

// NewConfigMapStateStore returns a store in namespace, which must exist.
//
// Deprecated: use state.NewConfigMapStore.
func NewConfigMapStateStore(client kubernetes.Interface, namespace string) *ConfigMapStateStore {
	return state.NewConfigMapStore(client, namespace)
}

// operationStateOf records a finished operation.
func operationStateOf(res sync.Result, revision string, started time.Time, automated, dryRun bool) *OperationState {
	op := &OperationState{Phase: res.Phase, Message: res.Message, Revision: revision, Automated: automated,
		DryRun: dryRun, StartedAt: started, FinishedAt: time.Now()}
	rows := res.Results
	if len(rows) > MaxOperationResults {
		kept := make([]sync.ResourceResult, 0, MaxOperationResults)
		for _, failedFirst := range []bool{true, false} {
			for _, r := range rows {
				if len(kept) == MaxOperationResults {
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
// (Options.State; key is the app's AppKey): it loads the record, hands it
// to update and, when update reports a change, saves it. It holds the lock
// the engine's own writes of records take (operations, history), so an
// add-on that keeps a field of the record (the image updater's held
// override) and the engine never lose each other's writes. When update
// returns an error nothing is saved and the error is returned; a store
// that fails is an error naming the app.
func (e *Engine) UpdateAppState(ctx context.Context, key string, update func(*state.AppState) (changed bool, err error)) error {
	e.stateMu.Lock()
	defer e.stateMu.Unlock()
	st, err := e.opts.State.Load(ctx, key)
	if err != nil {
		return fmt.Errorf("application %q: load its state: %w", key, err)
	}
	changed, err := update(&st)
	if err != nil || !changed {
		return err
	}
	if err := e.opts.State.Save(ctx, key, st); err != nil {
		return fmt.Errorf("application %q: save its state: %w", key, err)
	}
	return nil
}
