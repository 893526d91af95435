package appstatus

import (
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/health"
)

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
	// NotifyResourceActionRan is sent after a resource action was applied.
	NotifyResourceActionRan NotificationType = "ResourceActionRan"
	// NotifySelfHealBackoff reports an app whose live state drifted while
	// its self-heal waits for the backoff: once per self-heal to come,
	// SelfHealAttempt its number and Message when it is due (Argo CD's
	// controller logs it: "Skipping auto-sync: ... (retrying in ...)").
	NotifySelfHealBackoff NotificationType = "SelfHealBackoff"
)

// Notification tells a host's callback what happened to an application.
type Notification struct {
	// Type says what happened.
	Type NotificationType `json:"type"`
	// Key is the application's namespace and name: two apps of one name
	// in two namespaces differ by it.
	Key v1alpha1.AppKey `json:"key"`
	// Revision is the revision synced or compared (commas between sources),
	// when the notification is about one.
	Revision string `json:"revision,omitempty"`
	// Message says what happened, for people: the operation's message, the new
	// health's message.
	Message string `json:"message,omitempty"`
	// Health is the application's new health on NotifyHealthChanged;
	// empty on every other type (Engine.Apps().AppStatus has it).
	Health health.Code `json:"health,omitempty"`
	// Sync is the new sync status of a SyncStatusChanged notification.
	Sync SyncStatusCode `json:"sync,omitempty"`
	// SelfHealAttempt is, for a SyncStarted of an automated sync that
	// heals a drift (Argo CD's operation.sync.autoHealAttemptsCount) or a
	// SelfHealBackoff, the number of that self-heal in a row; 0 for any
	// other sync (a new revision, a person's).
	SelfHealAttempt int `json:"selfHealAttempt,omitempty"`
	// Time is when the engine saw the change.
	Time time.Time `json:"time"`
}
