package sync

import (
	"context"
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// NamespaceMetadata are a created namespace's labels and annotations.
type NamespaceMetadata struct {
	// Labels are set on the namespace the sync creates or manages.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are set on the namespace the sync creates or manages.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Request is one sync operation: what to apply, where, and how.
type Request struct {
	// App names the application; it goes into every object's tracking id
	// and decides which live objects are ours to prune.
	App string
	// Revision is the desired state's revision (a commit); it names hooks
	// created from a generateName.
	Revision string
	// Desired are the rendered objects. They are not modified.
	Desired []*unstructured.Unstructured
	// Namespace is the destination namespace, given to namespaced objects
	// that name none.
	Namespace string
	// Terminate, when closed, terminates the operation (Argo CD's terminate
	// operation): writes in flight finish, no further wave or hook starts,
	// the SyncFail hooks run, and the result is Failed with
	// ErrTerminated's message. A terminated operation is never retried.
	Terminate <-chan struct{}
	// NamespaceMetadata, with CreateNamespace=true, are labels and
	// annotations the destination namespace carries (Argo CD's
	// managedNamespaceMetadata). They are applied server-side under a field
	// manager of their own, so a label later removed from them is removed
	// from the namespace, and labels others set are left alone.
	NamespaceMetadata *NamespaceMetadata
	// Options are the application's sync options (Argo CD's syncOptions,
	// for example "CreateNamespace=true,PruneLast=true"). An object's own
	// sync-options annotation beats them.
	Options resource.Options
	// Prune enables deleting live objects of the app that are no longer
	// desired. Off by default, as in Argo CD.
	Prune bool
	// AllowEmpty lets a prune run when Desired is empty; without it an empty
	// desired state is refused rather than deleting everything.
	AllowEmpty bool
	// ConfirmPrune confirms the prunes of objects marked Prune=confirm.
	ConfirmPrune bool
	// DryRun plans and validates (server-side dry-run) and writes nothing.
	DryRun bool
	// Resources limits the sync to these keys (and their hooks do not run);
	// empty means every object.
	Resources []resource.Key
	// Admit and InSync, when set, replace Collaborators.Admit and Collaborators.InSync
	// for this operation, so that one Syncer can serve many applications,
	// each with its own project limits and ignore rules.
	Admit  func(ctx context.Context, obj *unstructured.Unstructured, namespaced, prune bool) error
	InSync func(ctx context.Context, desired, live *unstructured.Unstructured) (bool, error)
	// KeepIgnored implements Argo CD's RespectIgnoreDifferences=true sync
	// option, which Options must then hold: every object that exists is
	// applied (server-side or client-side) as KeepIgnored returns it, the
	// desired object with the fields of the app's ignoreDifferences set to
	// their live values; objects to create are applied as desired.
	// diff.Differ.KeepIgnored fits. With the option and no KeepIgnored,
	// Sync refuses the request (*OptionError) rather than reset the ignored
	// fields; KeepIgnored without the option is not used.
	KeepIgnored func(ctx context.Context, desired, live *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// State resumes an operation from the state a previous call returned
	// (after a restart, a cancellation or a timeout). Nil starts a new one.
	State *State
	// Checkpoint, when set, is given the operation's state at each point a
	// host should persist it to resume after a crash: after every wave (and
	// after the dry run), and before every hook create is sent, so that a
	// resumed operation adopts a hook whose create was sent rather than
	// create it again. Calls are serialised and each holds a newer state
	// than the one before. It blocks the operation while it runs; a host
	// whose store fails should log and return (the operation goes on).
	Checkpoint func(State)
	// Yield, when set, is called as the operation begins to wait for the
	// objects of a wave to become healthy (or its hooks to complete, or
	// its pruned objects to go), and the function it returns is called
	// before the operation writes its next wave; an operation that writes
	// nothing more (its last wave was waited for) never calls it. Hook
	// deletions by delete policy and finalizer removals are not counted
	// as writes that need it. A host that
	// bounds concurrent operations hands the slot of one that only waits
	// to another: the engine's SyncWorkers bound operations that write,
	// while waits, which read a watch-fed cache (Collaborators.Live), cost
	// nothing of the API server. resume may block until a slot is free;
	// it must return when the operation's context ends.
	Yield func() (resume func())
}

// OperationPhase is the phase of a sync operation: Running (more to do;
// call Sync again with the returned State), then one of the final phases
// Succeeded, Failed or Error (Completed reports them). A host checks
// Result.Phase == sync.Succeeded after a sync.
type OperationPhase string

// Operation phases.
const (
	// Running: the operation has more to do (it was interrupted, or waits
	// for a prune confirmation). Call Sync again with the returned State.
	Running OperationPhase = "Running"
	// Succeeded: everything was applied and, where waited for, healthy.
	Succeeded OperationPhase = "Succeeded"
	// Failed: a resource or hook failed; SyncFail hooks have run.
	Failed OperationPhase = "Failed"
	// Error: the operation could not run (bad input, no API server).
	Error OperationPhase = "Error"
)

// Completed reports whether the phase is final.
func (p OperationPhase) Completed() bool { return p == Succeeded || p == Failed || p == Error }

// Action is what a sync did to one object.
type Action string

// Actions.
const (
	Created    Action = "created"
	Configured Action = "configured"
	Unchanged  Action = "unchanged"
	Pruned     Action = "pruned"
	Skipped    Action = "skipped"
	// Recreated: deleted and created again (Force=true or an immutable field).
	Recreated Action = "recreated"
	// Planned: a dry run's verdict for an object it would apply.
	Planned Action = "planned"
)

// TaskStatus is the state of one task of the plan.
type TaskStatus string

// Task statuses.
const (
	TaskPending   TaskStatus = "Pending"
	TaskRunning   TaskStatus = "Running"
	TaskSucceeded TaskStatus = "Succeeded"
	TaskFailed    TaskStatus = "Failed"
	TaskSkipped   TaskStatus = "Skipped"
)

// ResourceResult is the outcome for one object (or one hook run).
type ResourceResult struct {
	// Key names the object.
	Key resource.Key `json:"key"`
	// Phase is the hook phase the object ran in (Sync for plain objects).
	Phase hooks.Phase `json:"phase"`
	// Wave is the object's sync wave.
	Wave int `json:"wave"`
	// Hook reports a hook run rather than an object of the application.
	Hook bool `json:"hook,omitempty"`
	// Action is what the sync did or plans to do with the object
	// (created, configured, unchanged, pruned, skipped, recreated, planned).
	Action Action `json:"action,omitempty"`
	// Status is how the object's task ended, or where it stands while the
	// operation runs.
	Status TaskStatus `json:"status"`
	// Health is the object's health when the sync last looked, if judged.
	Health *health.Status `json:"health,omitempty"`
	// Message says why, for people: an API error, what a wave waited for.
	Message string `json:"message,omitempty"`
}

// Result is what Sync returns: the operation's phase and a row per object,
// in plan order.
type Result struct {
	// Phase is the operation's phase: Running, Succeeded, Failed or Error.
	Phase OperationPhase `json:"phase"`
	// Message says why the operation failed, or what it did, for people.
	Message string `json:"message,omitempty"`
	// Results has a row per object and hook run, in plan order.
	Results []ResourceResult `json:"results"`
	// PendingConfirmation lists objects marked Prune=confirm that wait for
	// Request.ConfirmPrune; the operation stays Running until then.
	PendingConfirmation []resource.Key `json:"pendingConfirmation,omitempty"`
	// State resumes the operation; persist it to survive a restart.
	State State `json:"state"`
}

// State is the serialisable memory of an operation, so that a host can
// resume a sync after a restart: every step is re-entrant, applied objects
// are applied again idempotently, and hooks already created are found by the
// UID recorded here rather than created a second time.
type State struct {
	// StartedAt is when the operation began; it names generateName hooks.
	StartedAt time.Time `json:"startedAt"`
	// Revision is the revision the operation syncs.
	Revision string `json:"revision"`
	// DryRunDone records that the server-side dry-run of every task passed.
	DryRunDone bool `json:"dryRunDone,omitempty"`
	// Tasks are the tasks' memories, by task id ("<key>:<phase>").
	Tasks map[string]TaskState `json:"tasks,omitempty"`
	// Phase is the operation's phase when the state was taken.
	Phase OperationPhase `json:"phase,omitempty"`
	// FailureHandled records that SyncFail hooks were started.
	FailureHandled bool `json:"failureHandled,omitempty"`
}

// TaskState is the memory of one task.
type TaskState struct {
	// Status is how the task stands.
	Status TaskStatus `json:"status"`
	// Action is what the task does with its object.
	Action Action `json:"action,omitempty"`
	// Name is the object's name as created (hooks with a generateName).
	// For a hook it is set before the create is sent: a Name without a UID
	// means a create whose answer never came, and a resumed operation
	// adopts the hook of that name instead of creating it again.
	Name string `json:"name,omitempty"`
	// UID of the object the task created or applied.
	UID types.UID `json:"uid,omitempty"`
	// Generation seen in the apply's response; health is judged only on a
	// status that observed at least this generation.
	Generation int64 `json:"generation,omitempty"`
	// Message says why the task failed or what it waits for.
	Message string `json:"message,omitempty"`
	// Health is the object's health when the sync last judged it.
	Health *health.Status `json:"health,omitempty"`
}
