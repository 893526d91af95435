package gitops

import (
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
)

// SyncStatusCode says whether live state matches Git.
type SyncStatusCode string

// Sync status codes, Argo CD's.
const (
	Synced    SyncStatusCode = "Synced"
	OutOfSync SyncStatusCode = "OutOfSync"
	Unknown   SyncStatusCode = "Unknown"
)

// Status is the outcome of a refresh: how the application compares with
// Git and how healthy it is.
type Status struct {
	// Sync is Synced when every object matches, OutOfSync when any differs
	// or needs pruning, Unknown when the comparison could not be made.
	Sync SyncStatusCode `json:"sync"`
	// Health is the application's aggregated health.
	Health health.Status `json:"health"`
	// Revision is the commit compared (commas between sources).
	Revision string `json:"revision,omitempty"`
	// Resources has a row per desired or managed object.
	Resources []ResourceStatus `json:"resources,omitempty"`
	// Conditions are errors and warnings.
	Conditions []Condition `json:"conditions,omitempty"`
	// ReconciledAt is when the refresh finished.
	ReconciledAt time.Time `json:"reconciledAt"`
}

// ResourceStatus is one object's row.
type ResourceStatus struct {
	Key    resource.Key   `json:"key"`
	Status SyncStatusCode `json:"status"`
	Health *health.Status `json:"health,omitempty"`
	// Hook reports a hook, which never counts toward sync or health.
	Hook bool `json:"hook,omitempty"`
	// RequiresPruning reports a live object of the app no longer in Git.
	RequiresPruning bool `json:"requiresPruning,omitempty"`
	// PruneDisabled reports an object that requires pruning but whose
	// sync-options say Prune=false or Prune=confirm: a sync keeps it (the
	// first always, the second until a person confirms).
	PruneDisabled bool `json:"pruneDisabled,omitempty"`
	// Diff is the masked unified diff of an out-of-sync object.
	Diff string `json:"diff,omitempty"`
}

// ConditionType classifies a condition.
type ConditionType string

// Condition types.
const (
	ConditionComparisonError     ConditionType = "ComparisonError"
	ConditionInvalidSpec         ConditionType = "InvalidSpecError"
	ConditionSyncError           ConditionType = "SyncError"
	ConditionSharedResource      ConditionType = "SharedResourceWarning"
	ConditionTaintedKinds        ConditionType = "TaintedKindsWarning"
	ConditionSyncWindowBlocked   ConditionType = "SyncWindowBlocked"
	ConditionOrphanedResources   ConditionType = "OrphanedResourceWarning"
	ConditionRepeatedSyncFailure ConditionType = "RepeatedSyncFailure"
)

// Condition is an error or warning about an application.
type Condition struct {
	Type    ConditionType `json:"type"`
	Message string        `json:"message"`
}

// IsError reports whether the condition is an error rather than a warning.
func (c Condition) IsError() bool {
	switch c.Type {
	case ConditionComparisonError, ConditionInvalidSpec, ConditionSyncError, ConditionRepeatedSyncFailure:
		return true
	}
	return false
}

// NotificationType says what happened.
type NotificationType string

// Notification types.
const (
	NotifySyncStarted   NotificationType = "SyncStarted"
	NotifySyncSucceeded NotificationType = "SyncSucceeded"
	NotifySyncFailed    NotificationType = "SyncFailed"
	NotifyHealthChanged NotificationType = "HealthChanged"
	NotifyOutOfSync     NotificationType = "OutOfSync"
	// NotifyDeleted reports an application whose cascading deletion
	// (Engine.Delete) is done.
	NotifyDeleted NotificationType = "Deleted"
	// NotifySyncStatusChanged reports any change of the sync status
	// (Synced, OutOfSync, Unknown), in Notification.Sync.
	NotifySyncStatusChanged NotificationType = "SyncStatusChanged"
)

// Notification tells a host's callback what happened to an application.
type Notification struct {
	Type     NotificationType `json:"type"`
	App      string           `json:"app"`
	Revision string           `json:"revision,omitempty"`
	Message  string           `json:"message,omitempty"`
	Health   health.Code      `json:"health,omitempty"`
	// Sync is the new sync status of a SyncStatusChanged notification.
	Sync SyncStatusCode `json:"sync,omitempty"`
	Time time.Time      `json:"time"`
}

// HistoryEntry records one successful sync.
type HistoryEntry struct {
	// ID numbers the entries of an app from 1.
	ID int64 `json:"id"`
	// Revisions are the synced commits, one per source.
	Revisions  []string  `json:"revisions"`
	DeployedAt time.Time `json:"deployedAt"`
}
