// Package appstatus is an Application's status in Argo CD's shape
// (status.sync, status.health, status.resources, status.conditions,
// status.operationState, status.history), the engine's own result
// vocabulary (Status, Condition, Notification, HistoryEntry), below the
// engine so that reading a status does not import it, and the conversion
// between them: Refreshed turns a Status into the status a refresh writes,
// SyncResult turns a sync.Result into status.operationState's syncResult,
// WithHistory appends a deployment.
//
// Two consumers share it, so there is one conversion: the operator example
// writes this status on its custom resources, and the notify package gives
// Argo CD notification triggers and templates the Application as Object
// builds it (the "app" of `app.status.operationState.phase`).
package appstatus
