package state

import (
	"context"
	"encoding/json"
	"time"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// Store keeps what the engine must remember of an app beyond one process:
// its sync history (the rollback targets) and its last operation, so that
// a host, or the next run of a CLI, can explain what a sync did after the
// fact. Options.State selects one; the default keeps it in memory.
// Implementations must be safe for concurrent use. key is the app's
// instance name in the engine (its tracking id: the bare name for an app
// of the control namespace, "<namespace>_<name>" otherwise).
type Store interface {
	// Load returns an app's state; the zero AppState when none is kept.
	Load(ctx context.Context, key string) (AppState, error)
	// Save replaces an app's state.
	Save(ctx context.Context, key string, st AppState) error
	// Delete forgets an app.
	Delete(ctx context.Context, key string) error
}

// AppState is what a Store keeps per app.
type AppState struct {
	// History are the app's successful syncs, oldest first, at most the
	// app's revisionHistoryLimit (default 10).
	History []appstatus.HistoryEntry `json:"history,omitempty"`
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
	// write-back holds for the app, as the JSON document
	// imageupdate/controller writes and reads (ApplyOverride,
	// HeldOverride). It is opaque here: the engine and the stores keep it
	// byte for byte and never decode it, so that neither imports the image
	// updater; nil when none is held.
	ImageOverride json.RawMessage `json:"imageOverride,omitempty"`
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
	// SelfHealAttempt, on an automated sync that healed a drift at the
	// revision already synced, is the number of that self-heal in a row
	// (Argo CD's operation.sync.autoHealAttemptsCount); 0 otherwise.
	SelfHealAttempt int `json:"selfHealAttempt,omitempty"`
	// DryRun reports a dry-run.
	DryRun bool `json:"dryRun,omitempty"`
	// StartedAt is when the operation began.
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

// Resumable reports whether a recorded operation was left unfinished by a
// process that stopped (or crashed) mid-sync.
func (op *OperationState) Resumable() bool {
	return op != nil && op.Phase == sync.Running && op.Request != nil && !op.DryRun
}

// MaxOperationResults bounds the rows an OperationState keeps, so a sync of
// thousands of objects still fits a ConfigMap; failed rows are kept first.
const MaxOperationResults = 500

// OperationRequest is what a sync operation was asked to do, as the
// Store keeps it while the operation runs, so that another process
// can finish it (Argo CD's operation field). Revisions are the commits the
// operation renders, resolved when it began: a resumed operation syncs what
// the interrupted one was syncing, even when the branch has moved since.
type OperationRequest struct {
	// Revisions are the commits the operation syncs, one per source.
	Revisions []string `json:"revisions,omitempty"`
	// Prune deletes the live objects no longer in Git (SyncRequest.Prune).
	Prune bool `json:"prune,omitempty"`
	// ConfirmPrune confirms the prunes of objects marked Prune=confirm.
	ConfirmPrune bool `json:"confirmPrune,omitempty"`
	// Manual reports a sync a person asked for (not automated).
	Manual bool `json:"manual,omitempty"`
	// Resources limits the sync to these objects; empty means every object.
	Resources []resource.Key `json:"resources,omitempty"`
	// SyncOptions are the operation's own sync options (Argo CD's
	// syncOptions), on top of the application's.
	SyncOptions []string `json:"syncOptions,omitempty"`
}
