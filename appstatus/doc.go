// Package appstatus is an Application's status in Argo CD's shape
// (status.sync, status.health, status.resources, status.conditions,
// status.operationState, status.history) and its conversion from what the
// engine reports: Refreshed turns a gitops.Status into the status a refresh
// writes, SyncResult turns a sync.Result into status.operationState's
// syncResult, WithHistory appends a deployment.
//
// Two consumers share it, so there is one conversion: the operator example
// writes this status on its custom resources, and the notify package gives
// Argo CD notification triggers and templates the Application as Object
// builds it (the "app" of `app.status.operationState.phase`).
package appstatus
