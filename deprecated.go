package gitops

import (
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/state"
	"k8s.io/client-go/kubernetes"
)

// The names below were the engine's own for the results (package
// appstatus), the state stores (package state) and the automated-sync
// decision (package autosync) before those moved below the engine. The
// root keeps them for one release, each with its own Deprecated marker so
// that linters and editors flag every use; CHANGELOG.md lists them with
// their replacements. internal/layers' tests keep every other package off
// them.

// Result vocabulary: package appstatus.
type (
	// SyncStatusCode says whether live state matches Git.
	//
	// Deprecated: use appstatus.SyncStatusCode.
	SyncStatusCode = appstatus.SyncStatusCode
	// Status is the outcome of a refresh.
	//
	// Deprecated: use appstatus.Status.
	Status = appstatus.Status
	// ResourceStatus is one object's row of a Status.
	//
	// Deprecated: use appstatus.ResourceRow.
	ResourceStatus = appstatus.ResourceRow
	// ConditionType classifies a condition.
	//
	// Deprecated: use appstatus.ConditionType.
	ConditionType = appstatus.ConditionType
	// Condition is an error or warning about an application.
	//
	// Deprecated: use appstatus.Condition.
	Condition = appstatus.Condition
	// NotificationType says what happened.
	//
	// Deprecated: use appstatus.NotificationType.
	NotificationType = appstatus.NotificationType
	// Notification tells a host's callback what happened to an application.
	//
	// Deprecated: use appstatus.Notification.
	Notification = appstatus.Notification
	// HistoryEntry records one successful sync.
	//
	// Deprecated: use appstatus.HistoryEntry.
	HistoryEntry = appstatus.HistoryEntry
)

// Sync status codes: package appstatus.
const (
	// Synced is the sync status when every object matches Git.
	//
	// Deprecated: use appstatus.Synced.
	Synced = appstatus.Synced
	// OutOfSync is the sync status when an object differs from Git or needs
	// pruning.
	//
	// Deprecated: use appstatus.OutOfSync.
	OutOfSync = appstatus.OutOfSync
	// Unknown is the sync status when the comparison could not be made.
	//
	// Deprecated: use appstatus.Unknown.
	Unknown = appstatus.Unknown
)

// Condition types: package appstatus.
const (
	// ConditionComparisonError is the condition type ComparisonError.
	//
	// Deprecated: use appstatus.ConditionComparisonError.
	ConditionComparisonError = appstatus.ConditionComparisonError
	// ConditionInvalidSpec is the condition type InvalidSpecError.
	//
	// Deprecated: use appstatus.ConditionInvalidSpec.
	ConditionInvalidSpec = appstatus.ConditionInvalidSpec
	// ConditionSyncError is the condition type SyncError.
	//
	// Deprecated: use appstatus.ConditionSyncError.
	ConditionSyncError = appstatus.ConditionSyncError
	// ConditionSharedResource is the condition type SharedResourceWarning.
	//
	// Deprecated: use appstatus.ConditionSharedResource.
	ConditionSharedResource = appstatus.ConditionSharedResource
	// ConditionTaintedKinds is the condition type TaintedKindsWarning.
	//
	// Deprecated: use appstatus.ConditionTaintedKinds.
	ConditionTaintedKinds = appstatus.ConditionTaintedKinds
	// ConditionSyncWindowBlocked is the condition type SyncWindowBlocked.
	//
	// Deprecated: use appstatus.ConditionSyncWindowBlocked.
	ConditionSyncWindowBlocked = appstatus.ConditionSyncWindowBlocked
	// ConditionOrphanedResources is the condition type OrphanedResourceWarning.
	//
	// Deprecated: use appstatus.ConditionOrphanedResources.
	ConditionOrphanedResources = appstatus.ConditionOrphanedResources
	// ConditionRepeatedSyncFailure is the condition type RepeatedSyncFailure.
	//
	// Deprecated: use appstatus.ConditionRepeatedSyncFailure.
	ConditionRepeatedSyncFailure = appstatus.ConditionRepeatedSyncFailure
	// ConditionExcludedResource is the condition type ExcludedResourceWarning.
	//
	// Deprecated: use appstatus.ConditionExcludedResource.
	ConditionExcludedResource = appstatus.ConditionExcludedResource
)

// Notification types: package appstatus.
const (
	// NotifySyncStarted is the notification type SyncStarted.
	//
	// Deprecated: use appstatus.NotifySyncStarted.
	NotifySyncStarted = appstatus.NotifySyncStarted
	// NotifySyncSucceeded is the notification type SyncSucceeded.
	//
	// Deprecated: use appstatus.NotifySyncSucceeded.
	NotifySyncSucceeded = appstatus.NotifySyncSucceeded
	// NotifySyncFailed is the notification type SyncFailed.
	//
	// Deprecated: use appstatus.NotifySyncFailed.
	NotifySyncFailed = appstatus.NotifySyncFailed
	// NotifyHealthChanged is the notification type HealthChanged.
	//
	// Deprecated: use appstatus.NotifyHealthChanged.
	NotifyHealthChanged = appstatus.NotifyHealthChanged
	// NotifyOutOfSync is the notification type OutOfSync.
	//
	// Deprecated: use appstatus.NotifyOutOfSync.
	NotifyOutOfSync = appstatus.NotifyOutOfSync
	// NotifyDeleted is the notification type Deleted.
	//
	// Deprecated: use appstatus.NotifyDeleted.
	NotifyDeleted = appstatus.NotifyDeleted
	// NotifySyncStatusChanged is the notification type SyncStatusChanged.
	//
	// Deprecated: use appstatus.NotifySyncStatusChanged.
	NotifySyncStatusChanged = appstatus.NotifySyncStatusChanged
	// NotifyResourceActionRan is the notification type ResourceActionRan.
	//
	// Deprecated: use appstatus.NotifyResourceActionRan.
	NotifyResourceActionRan = appstatus.NotifyResourceActionRan
)

// State stores: package state.
type (
	// StateStore keeps what the engine must remember of an app beyond one
	// process.
	//
	// Deprecated: use state.Store.
	StateStore = state.Store
	// AppState is what a state store keeps per app.
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
func NewMemoryStateStore() *state.MemoryStore { return state.NewMemoryStore() }

// NewConfigMapStateStore returns a store in namespace, which must exist.
//
// Deprecated: use state.NewConfigMapStore.
func NewConfigMapStateStore(client kubernetes.Interface, namespace string) *state.ConfigMapStore {
	return state.NewConfigMapStore(client, namespace)
}

// Automated sync: package autosync.

// SelfHealTimeout is the least time between two self-heal syncs of one app
// at one revision, and the first step of the self-heal backoff.
//
// Deprecated: use autosync.SelfHealTimeout.
const SelfHealTimeout = autosync.SelfHealTimeout

// MaxSelfHealBackoff caps the wait between self-heal syncs of one revision.
//
// Deprecated: use autosync.MaxSelfHealBackoff.
const MaxSelfHealBackoff = autosync.MaxSelfHealBackoff

type (
	// AutoSyncRecord is what the decision remembers of the last automated sync
	// of an app.
	//
	// Deprecated: use autosync.Record.
	AutoSyncRecord = autosync.Record
	// AutoSyncInput is what the automated-sync decision looks at.
	//
	// Deprecated: use autosync.Input.
	AutoSyncInput = autosync.Input
	// AutoSyncDecision is the outcome of the automated-sync decision.
	//
	// Deprecated: use autosync.Decision.
	AutoSyncDecision = autosync.Decision
)

// DecideAutoSync decides whether an app with automated sync is synced now,
// after a refresh, by the rules autosync.Decide lists.
//
// Deprecated: use autosync.Decide.
func DecideAutoSync(in autosync.Input) autosync.Decision { return autosync.Decide(in) }
