package engine

import "github.com/kubegitops/gitops/appstatus"

// The result vocabulary lives in package appstatus, below the engine, so
// that a host reading a status does not import the engine; these aliases
// keep the old names for one release.
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

// Sync status codes.
//
// Deprecated: use appstatus.Synced, appstatus.OutOfSync, appstatus.Unknown.
const (
	Synced    = appstatus.Synced
	OutOfSync = appstatus.OutOfSync
	Unknown   = appstatus.Unknown
)

// Condition types.
//
// Deprecated: use the appstatus constants of the same names.
const (
	ConditionComparisonError     = appstatus.ConditionComparisonError
	ConditionInvalidSpec         = appstatus.ConditionInvalidSpec
	ConditionSyncError           = appstatus.ConditionSyncError
	ConditionSharedResource      = appstatus.ConditionSharedResource
	ConditionTaintedKinds        = appstatus.ConditionTaintedKinds
	ConditionSyncWindowBlocked   = appstatus.ConditionSyncWindowBlocked
	ConditionOrphanedResources   = appstatus.ConditionOrphanedResources
	ConditionRepeatedSyncFailure = appstatus.ConditionRepeatedSyncFailure
	ConditionExcludedResource    = appstatus.ConditionExcludedResource
)

// Notification types.
//
// Deprecated: use the appstatus constants of the same names.
const (
	NotifySyncStarted       = appstatus.NotifySyncStarted
	NotifySyncSucceeded     = appstatus.NotifySyncSucceeded
	NotifySyncFailed        = appstatus.NotifySyncFailed
	NotifyHealthChanged     = appstatus.NotifyHealthChanged
	NotifyOutOfSync         = appstatus.NotifyOutOfSync
	NotifyDeleted           = appstatus.NotifyDeleted
	NotifySyncStatusChanged = appstatus.NotifySyncStatusChanged
	NotifyResourceActionRan = appstatus.NotifyResourceActionRan
)
