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
	// Health is the application's health when the notification was made.
	Health health.Code `json:"health,omitempty"`
	// Sync is the new sync status of a SyncStatusChanged notification.
	Sync SyncStatusCode `json:"sync,omitempty"`
	// Time is when the engine saw the change.
	Time time.Time `json:"time"`
}
