package v1alpha1

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
	// Retry overrides the app's retry strategy for this operation.
	Retry *RetryStrategy `json:"retry,omitempty"`
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
	// a row (Argo CD's autoHealAttemptsCount): the self-heal backoff grows
	// with it.
	SelfHealAttemptsCount int64 `json:"autoHealAttemptsCount,omitempty"`
	// SyncStrategy says how objects are applied (apply or hook, with or
	// without force).
	SyncStrategy *SyncStrategy `json:"syncStrategy,omitempty"`
	// Source overrides the app's source for this sync (a rollback).
	Source *ApplicationSource `json:"source,omitempty"`
	// Sources override the app's sources for this sync (a rollback of a
	// multi-source app).
	Sources []ApplicationSource `json:"sources,omitempty"`
	// Manifests replace the rendered manifests (Argo CD's local sync).
	Manifests []string `json:"manifests,omitempty"`
}

// SyncStrategy is Argo CD's sync strategy of an operation: Apply (kubectl
// apply) or Hook (apply, with hooks); Force deletes and re-creates objects
// an apply cannot change.
type SyncStrategy struct {
	// Apply applies the objects without running hooks.
	Apply *SyncStrategyApply `json:"apply,omitempty"`
	// Hook applies the objects and runs their hooks (the default when neither
	// is set).
	Hook *SyncStrategyHook `json:"hook,omitempty"`
}

// SyncStrategyApply applies without running hooks.
type SyncStrategyApply struct {
	// Force re-creates objects an apply cannot change.
	Force bool `json:"force,omitempty"`
}

// SyncStrategyHook applies and runs hooks (Argo CD's default).
type SyncStrategyHook struct {
	// SyncStrategyApply holds Force.
	SyncStrategyApply `json:",inline"`
}

// SyncOperationResource names one object a sync is limited to.
type SyncOperationResource struct {
	// Group is the object's API group; empty is the core group.
	Group string `json:"group,omitempty"`
	// Kind is the object's kind.
	Kind string `json:"kind"`
	// Name is the object's name.
	Name string `json:"name"`
	// Namespace is the object's namespace; empty for cluster-scoped objects.
	Namespace string `json:"namespace,omitempty"`
}

// OperationInitiator is who started an operation.
type OperationInitiator struct {
	// Username names the person.
	Username string `json:"username,omitempty"`
	// Automated is true for syncs the controller started itself.
	Automated bool `json:"automated,omitempty"`
}

// Info is a name and value attached to an application (spec.info) or an
// operation.
type Info struct {
	// Name is the label shown to people.
	Name string `json:"name"`
	// Value is the text or URL shown with it.
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
	// Summary are the app's external URLs and images.
	Summary ApplicationSummary `json:"summary,omitzero"`
	// ResourceTree are the app's objects and their descendants (Pods of a
	// Deployment's ReplicaSets, ...), at most MaxTreeNodes of them
	// (NewApplicationTree bounds it). Argo CD keeps the tree outside the
	// Application; this model keeps it in status so a host without a cache
	// server can show it. The engine's tree (Engine.ResourceTree) holds no
	// volatile field: no node's resourceVersion, no health transition
	// time, so it changes only when an object comes or goes or its
	// owners, images or health change, and a controller that writes the
	// status only when it changed does not rewrite it because a Pod's
	// status moved.
	ResourceTree *ApplicationTree `json:"resourceTree,omitempty"`
	// SourceType is the tool of a single-source app (Helm, Kustomize,
	// Directory, Plugin).
	SourceType string `json:"sourceType,omitempty"`
	// SourceTypes are the tools of a multi-source app, per source.
	SourceTypes []string `json:"sourceTypes,omitempty"`
	// ControllerNamespace is the namespace of the controller that wrote
	// this status.
	ControllerNamespace string `json:"controllerNamespace,omitempty"`
	// ObservedAt is Argo CD's deprecated twin of ReconciledAt.
	ObservedAt *metav1.Time `json:"observedAt,omitempty"`
	// ResourceHealthSource says where resource health is kept: "" in
	// status.resources, "appTree" outside the Application.
	ResourceHealthSource string `json:"resourceHealthSource,omitempty"`
	// SourceHydrator is the source hydrator's last and current operation
	// (written by package hydrator's hosts), for an app with
	// spec.sourceHydrator.
	SourceHydrator SourceHydratorStatus `json:"sourceHydrator,omitzero"`
}

// ApplicationSummary are facts about an app shown in lists.
type ApplicationSummary struct {
	// ExternalURLs are the URLs of the app's Ingresses and Services.
	ExternalURLs []string `json:"externalURLs,omitempty"`
	// Images are the container images the app runs.
	Images []string `json:"images,omitempty"`
	// IsAppOfApps reports an app whose objects include Applications.
	IsAppOfApps bool `json:"isAppOfApps,omitempty"`
}

// MaxTreeNodes bounds status.resourceTree, so that an app with thousands
// of Pods cannot push its Application past etcd's object size limit.
const MaxTreeNodes = 1000

// ApplicationTree is an app's objects and their descendants.
type ApplicationTree struct {
	// Nodes are the objects, parents before children.
	Nodes []ResourceNode `json:"nodes,omitempty"`
	// Truncated counts the nodes left out past MaxTreeNodes.
	Truncated int64 `json:"truncated,omitempty"`
}

// ResourceRef names one object.
type ResourceRef struct {
	// Group is the object's API group; empty is the core group.
	Group string `json:"group,omitempty"`
	// Version is the object's API version.
	Version string `json:"version,omitempty"`
	// Kind is the object's kind.
	Kind string `json:"kind,omitempty"`
	// Namespace is the object's namespace; empty for cluster-scoped objects.
	Namespace string `json:"namespace,omitempty"`
	// Name is the object's name.
	Name string `json:"name,omitempty"`
	// UID is the live object's UID.
	UID string `json:"uid,omitempty"`
}

// ResourceNode is one object of the tree.
type ResourceNode struct {
	// ResourceRef names the object (its fields are inlined).
	ResourceRef `json:",inline"`
	// ParentRefs are the objects that own this one.
	ParentRefs []ResourceRef `json:"parentRefs,omitempty"`
	// Health is the object's health, when judged.
	Health *HealthStatus `json:"health,omitempty"`
	// Images are the container images of a Pod or workload.
	Images []string `json:"images,omitempty"`
	// ResourceVersion is the live object's resourceVersion. The engine's
	// tree leaves it empty: it moves on every write of the object, and a
	// status holding it would be rewritten as often.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// CreatedAt is the live object's creationTimestamp.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
}

// SyncStatus is status.sync.
type SyncStatus struct {
	// Status is Synced, OutOfSync or Unknown.
	Status string `json:"status"`
	// Revision is the revision compared (single source).
	Revision string `json:"revision,omitempty"`
	// Revisions are the revisions compared, per source (multi-source).
	Revisions []string `json:"revisions,omitempty"`
	// ComparedTo is the spec the comparison used.
	ComparedTo *ComparedTo `json:"comparedTo,omitempty"`
}

// ComparedTo is the part of the spec a comparison used.
type ComparedTo struct {
	// Source is the single source compared.
	Source *ApplicationSource `json:"source,omitempty"`
	// Sources are the sources compared (multi-source).
	Sources []ApplicationSource `json:"sources,omitempty"`
	// Destination is the destination compared.
	Destination ApplicationDestination `json:"destination"`
	// IgnoreDifferences are the app's ignore rules the comparison applied.
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
}

// HealthStatus is a health code and why.
type HealthStatus struct {
	// Status is Healthy, Progressing, Degraded, Suspended, Missing or Unknown.
	Status string `json:"status,omitempty"`
	// Message says why, for people.
	Message string `json:"message,omitempty"`
	// LastTransitionTime is when the app's health last changed status (set
	// on status.health only). Argo CD's catalog trigger on-deployed
	// compares it with the sync's finishedAt.
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ResourceStatus is one object's row in status.resources.
type ResourceStatus struct {
	// Group is the object's API group; empty is the core group.
	Group string `json:"group,omitempty"`
	// Version is the object's API version.
	Version string `json:"version,omitempty"`
	// Kind is the object's kind.
	Kind string `json:"kind,omitempty"`
	// Namespace is the object's namespace; empty for cluster-scoped objects.
	Namespace string `json:"namespace,omitempty"`
	// Name is the object's name.
	Name string `json:"name,omitempty"`
	// Status is Synced, OutOfSync or Unknown.
	Status string `json:"status,omitempty"`
	// Health is the live object's health; absent for hooks.
	Health *HealthStatus `json:"health,omitempty"`
	// Hook reports a hook, which never counts toward sync or health.
	Hook bool `json:"hook,omitempty"`
	// RequiresPruning reports a live object no longer in Git.
	RequiresPruning bool `json:"requiresPruning,omitempty"`
	// RequiresDeletionConfirmation reports an object whose deletion waits
	// for a person (Prune=confirm, Delete=confirm).
	RequiresDeletionConfirmation bool `json:"requiresDeletionConfirmation,omitempty"`
	// SyncWave is the object's wave.
	SyncWave int64 `json:"syncWave,omitempty"`
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
	// StartedAt is when the operation started.
	StartedAt metav1.Time `json:"startedAt"`
	// FinishedAt is when the operation ended; unset while it runs.
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// RetryCount counts the retries of the operation so far.
	RetryCount int64 `json:"retryCount,omitempty"`
}

// SyncOperationResult is what a sync did, per object.
type SyncOperationResult struct {
	// Resources are the per-object outcomes, in plan order.
	Resources []ResourceResult `json:"resources,omitempty"`
	// Revision is the revision synced (single source).
	Revision string `json:"revision"`
	// Revisions are the revisions synced, per source (multi-source).
	Revisions []string `json:"revisions,omitempty"`
	// Source is the spec's source synced (single source).
	Source *ApplicationSource `json:"source,omitempty"`
	// Sources are the spec's sources synced (multi-source).
	Sources []ApplicationSource `json:"sources,omitempty"`
	// ManagedNamespaceMetadata is what the sync set on the namespace it
	// manages.
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// ResourceResult is one object's outcome in a sync.
type ResourceResult struct {
	// Group is the object's API group; empty is the core group.
	Group string `json:"group"`
	// Version is the object's API version.
	Version string `json:"version"`
	// Kind is the object's kind.
	Kind string `json:"kind"`
	// Namespace is the object's namespace; empty for cluster-scoped objects.
	Namespace string `json:"namespace"`
	// Name is the object's name.
	Name string `json:"name"`
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
	// Images are the container images of the object.
	Images []string `json:"images,omitempty"`
}

// RevisionHistory is one deployment.
type RevisionHistory struct {
	// ID numbers the deployments of an app from 0, as Argo CD does.
	ID int64 `json:"id"`
	// Revision is the synced revision (single source).
	Revision string `json:"revision,omitempty"`
	// Revisions are the synced revisions per source (multi-source).
	Revisions []string `json:"revisions,omitempty"`
	// DeployStartedAt is when the sync started.
	DeployStartedAt *metav1.Time `json:"deployStartedAt,omitempty"`
	// DeployedAt is when the sync finished.
	DeployedAt metav1.Time `json:"deployedAt"`
	// InitiatedBy says who asked for the sync.
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
	// Source is the spec's source deployed (single source): a rollback's
	// target.
	Source *ApplicationSource `json:"source,omitempty"`
	// Sources are the spec's sources deployed (multi-source): a rollback's
	// target.
	Sources []ApplicationSource `json:"sources,omitempty"`
}
