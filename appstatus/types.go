package appstatus

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Operation is the top-level "operation" field of an Application: a request
// (by a person, a CLI or this controller) to run one sync. The controller
// runs it once, records the outcome in status.operationState and removes
// the field.
type Operation struct {
	// Sync is the sync to run.
	Sync *SyncOperation `json:"sync,omitempty"`
	// InitiatedBy says who asked.
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
	// Info are free-form notes shown with the operation.
	Info []Info `json:"info,omitempty"`
}

// SyncOperation are the parameters of a sync, as Argo CD writes them.
type SyncOperation struct {
	// Revision pins the revision of a single-source app.
	Revision string `json:"revision,omitempty"`
	// Revisions pin the revision of each source of a multi-source app.
	Revisions []string `json:"revisions,omitempty"`
	// Prune deletes the app's objects no longer in Git.
	Prune bool `json:"prune,omitempty"`
	// DryRun validates on the server and writes nothing.
	DryRun bool `json:"dryRun,omitempty"`
	// Resources limits the sync to these objects.
	Resources []SyncOperationResource `json:"resources,omitempty"`
	// SyncOptions are merged over the app's syncOptions for this sync.
	SyncOptions []string `json:"syncOptions,omitempty"`
	// SelfHealAttemptsCount counts the self-heal syncs of one revision in
	// a row (Argo CD's field): the self-heal backoff grows with it.
	SelfHealAttemptsCount int64 `json:"selfHealAttemptsCount,omitempty"`
}

// SyncOperationResource names one object a sync is limited to.
type SyncOperationResource struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// OperationInitiator is who started an operation.
type OperationInitiator struct {
	// Username names the person.
	Username string `json:"username,omitempty"`
	// Automated is true for syncs the controller started itself.
	Automated bool `json:"automated,omitempty"`
}

// Info is a name and value attached to an operation.
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ApplicationStatus is an Application's status in Argo CD's shape, so that
// tools reading Argo CD's status (kubectl columns, dashboards, notification
// triggers) work.
type ApplicationStatus struct {
	// Sync says whether the live state matches Git, at which revision.
	Sync SyncStatus `json:"sync,omitempty"`
	// Health is the app's aggregated health.
	Health HealthStatus `json:"health,omitempty"`
	// Resources has a row per desired or managed object.
	Resources []ResourceStatus `json:"resources,omitempty"`
	// Conditions are the errors and warnings of the last refresh.
	Conditions []ApplicationCondition `json:"conditions,omitempty"`
	// ReconciledAt is when the app was last refreshed. It is rewritten
	// at most once per refresh interval when nothing else changed.
	ReconciledAt *metav1.Time `json:"reconciledAt,omitempty"`
	// OperationState is the state of the last (or running) sync.
	OperationState *OperationState `json:"operationState,omitempty"`
	// History are the deployments, oldest first, at most
	// spec.revisionHistoryLimit (default 10).
	History []RevisionHistory `json:"history,omitempty"`
}

// SyncStatus is status.sync.
type SyncStatus struct {
	// Status is Synced, OutOfSync or Unknown.
	Status string `json:"status"`
	// Revision is the revision compared (single source).
	Revision string `json:"revision,omitempty"`
	// Revisions are the revisions compared, per source (multi-source).
	Revisions []string `json:"revisions,omitempty"`
}

// HealthStatus is a health code and why.
type HealthStatus struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	// LastTransitionTime is when the app's health last changed status (set
	// on status.health only). Argo CD's catalog trigger on-deployed
	// compares it with the sync's finishedAt.
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ResourceStatus is one object's row in status.resources.
type ResourceStatus struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Status is Synced, OutOfSync or Unknown.
	Status string `json:"status,omitempty"`
	// Health is the live object's health; absent for hooks.
	Health *HealthStatus `json:"health,omitempty"`
	// Hook reports a hook, which never counts toward sync or health.
	Hook bool `json:"hook,omitempty"`
	// RequiresPruning reports a live object no longer in Git.
	RequiresPruning bool `json:"requiresPruning,omitempty"`
}

// ApplicationCondition is an error or warning.
type ApplicationCondition struct {
	// Type is, for example, ComparisonError or SharedResourceWarning.
	Type string `json:"type"`
	// Message says what is wrong.
	Message string `json:"message"`
	// LastTransitionTime is when this condition first appeared.
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// OperationState is the state of a sync operation.
type OperationState struct {
	// Operation is the operation run.
	Operation Operation `json:"operation"`
	// Phase is Running, Succeeded, Failed or Error.
	Phase string `json:"phase"`
	// Message says how it went.
	Message string `json:"message,omitempty"`
	// SyncResult is what the sync did.
	SyncResult *SyncOperationResult `json:"syncResult,omitempty"`
	// StartedAt and FinishedAt bound the operation.
	StartedAt  metav1.Time  `json:"startedAt"`
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// SyncOperationResult is what a sync did, per object.
type SyncOperationResult struct {
	// Resources are the per-object outcomes, in plan order.
	Resources []ResourceResult `json:"resources,omitempty"`
	// Revision is the revision synced (single source).
	Revision string `json:"revision"`
	// Revisions are the revisions synced, per source (multi-source).
	Revisions []string `json:"revisions,omitempty"`
}

// ResourceResult is one object's outcome in a sync.
type ResourceResult struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Status is Synced, SyncFailed, Pruned or PruneSkipped.
	Status string `json:"status,omitempty"`
	// Message says what happened, for people.
	Message string `json:"message,omitempty"`
	// HookType is the hook's phase (PreSync, Sync, PostSync, SyncFail)
	// for hooks.
	HookType string `json:"hookType,omitempty"`
	// HookPhase is the hook's run state (Running, Succeeded, Failed).
	HookPhase string `json:"hookPhase,omitempty"`
	// SyncPhase is the phase the object was applied in.
	SyncPhase string `json:"syncPhase,omitempty"`
}

// RevisionHistory is one deployment.
type RevisionHistory struct {
	// ID numbers the deployments of an app from 0, as Argo CD does.
	ID int64 `json:"id"`
	// Revision is the synced revision (single source).
	Revision string `json:"revision,omitempty"`
	// Revisions are the synced revisions per source (multi-source).
	Revisions []string `json:"revisions,omitempty"`
	// DeployStartedAt and DeployedAt bound the sync.
	DeployStartedAt *metav1.Time `json:"deployStartedAt,omitempty"`
	DeployedAt      metav1.Time  `json:"deployedAt"`
	// InitiatedBy says who asked for the sync.
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
}
