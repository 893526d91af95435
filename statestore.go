package gitops

import (
	"context"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops/imageupdate"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// StateStore keeps what the engine must remember of an app beyond one
// process: its sync history (the rollback targets) and its last operation,
// so that a host, or the next run of a CLI, can explain what a sync did
// after the fact. Options.State selects one; the default keeps it in
// memory. Implementations must be safe for concurrent use.
type StateStore interface {
	// Load returns an app's state; the zero AppState when none is kept.
	Load(ctx context.Context, app string) (AppState, error)
	// Save replaces an app's state.
	Save(ctx context.Context, app string, st AppState) error
	// Delete forgets an app.
	Delete(ctx context.Context, app string) error
}

// AppState is what a StateStore keeps per app.
type AppState struct {
	// History are the app's successful syncs, oldest first, at most the
	// app's revisionHistoryLimit (default 10).
	History []HistoryEntry `json:"history,omitempty"`
	// Operation is the last sync operation, running or finished.
	Operation *OperationState `json:"operation,omitempty"`
	// DeletionHooks records that the app's last successful sync had
	// PreDelete or PostDelete hooks, so its deletion renders it to run
	// them (Argo CD adds its post-delete finalizer the same way); an app
	// without them is deleted without rendering, even when its source is
	// gone.
	DeletionHooks bool `json:"deletionHooks,omitempty"`
	// Deleting records that the app's deletion has begun: its PreDelete
	// hooks succeeded and its objects are being deleted, so they do not
	// run again on the next call of Delete.
	Deleting bool `json:"deleting,omitempty"`
	// ImageOverride is the parameter override the image updater's argocd
	// write-back holds for the app (Engine.ApplyImageOverride).
	ImageOverride *imageupdate.Override `json:"imageOverride,omitempty"`
}

// OperationState is a sync operation as the engine records it (Argo CD's
// status.operationState).
type OperationState struct {
	// Phase is Running until the operation ends.
	Phase sync.OperationPhase `json:"phase"`
	// Message says why an operation failed, or what it did.
	Message string `json:"message,omitempty"`
	// Revision is the revision synced (commas between sources).
	Revision string `json:"revision,omitempty"`
	// Automated reports an automated sync (not one a person asked for).
	Automated bool `json:"automated,omitempty"`
	// DryRun reports a dry-run.
	DryRun    bool      `json:"dryRun,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	// FinishedAt is zero while the operation runs.
	FinishedAt time.Time `json:"finishedAt,omitempty"`
	// Results has a row per object (at most MaxOperationResults; Truncated
	// counts the rows left out).
	Results   []sync.ResourceResult `json:"results,omitempty"`
	Truncated int                   `json:"truncated,omitempty"`
	// Request is what a running operation was asked to do, kept until it
	// ends so that Resume can finish it after a restart.
	Request *OperationRequest `json:"request,omitempty"`
	// Checkpoint is a running operation's last saved syncer state (after a
	// wave, or before a hook create); nil once the operation ended.
	Checkpoint *sync.State `json:"checkpoint,omitempty"`
}

// MaxOperationResults bounds the rows an OperationState keeps, so a sync of
// thousands of objects still fits a ConfigMap; failed rows are kept first.
const MaxOperationResults = 500

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

// MemoryStateStore keeps app state in memory, for the life of the process
// (the default StateStore).
type MemoryStateStore struct {
	mu   gosync.Mutex
	apps map[string]AppState
}

// NewMemoryStateStore returns an empty in-memory store.
func NewMemoryStateStore() *MemoryStateStore {
	return &MemoryStateStore{apps: map[string]AppState{}}
}

// Load implements StateStore.
func (m *MemoryStateStore) Load(_ context.Context, app string) (AppState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return copyAppState(m.apps[app]), nil
}

// Save implements StateStore.
func (m *MemoryStateStore) Save(_ context.Context, app string, st AppState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.apps[app] = copyAppState(st)
	return nil
}

// Delete implements StateStore.
func (m *MemoryStateStore) Delete(_ context.Context, app string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.apps, app)
	return nil
}

// copyAppState copies the slices and the operation, so that callers never
// share memory with the store.
func copyAppState(st AppState) AppState {
	out := st
	out.History = append([]HistoryEntry(nil), st.History...)
	if st.Operation != nil {
		op := *st.Operation
		op.Results = append([]sync.ResourceResult(nil), op.Results...)
		if op.Request != nil {
			rq := *op.Request
			rq.Revisions = append([]string(nil), rq.Revisions...)
			rq.Resources = append([]resource.Key(nil), rq.Resources...)
			rq.SyncOptions = append([]string(nil), rq.SyncOptions...)
			op.Request = &rq
		}
		if op.Checkpoint != nil {
			cp := *op.Checkpoint
			cp.Tasks = make(map[string]sync.TaskState, len(op.Checkpoint.Tasks))
			for k, v := range op.Checkpoint.Tasks {
				cp.Tasks[k] = v
			}
			op.Checkpoint = &cp
		}
		out.Operation = &op
	}
	if st.ImageOverride != nil {
		ov := imageupdate.Override{
			KustomizeImages: append([]string(nil), st.ImageOverride.KustomizeImages...),
			HelmParameters:  append([]imageupdate.HelmParameter(nil), st.ImageOverride.HelmParameters...),
		}
		out.ImageOverride = &ov
	}
	return out
}
