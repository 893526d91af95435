package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppProject is an Argo CD AppProject (argoproj.io/v1alpha1): what the
// applications of a project may deploy, from where and to where, and when.
// Package project enforces its limits for every rendered object before
// anything is written.
//
// +kubebuilder:object:root=true
type AppProject struct {
	// TypeMeta holds apiVersion (argoproj.io/v1alpha1) and kind (AppProject).
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the project's metadata; applications name the project by
	// its name.
	metav1.ObjectMeta `json:"metadata"`
	// Spec holds the project's limits.
	Spec AppProjectSpec `json:"spec"`
}

// AppProjectList is a list of AppProjects.
//
// +kubebuilder:object:root=true
type AppProjectList struct {
	// TypeMeta holds apiVersion and kind (AppProjectList).
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the list's resourceVersion and continue token.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the AppProjects.
	Items []AppProject `json:"items"`
}

// AppProjectSpec holds a project's limits.
type AppProjectSpec struct {
	// Description says what the project is for, for people; the engine does
	// not read it.
	Description string `json:"description,omitempty"`
	// SourceRepos are globs of the repository URLs apps may use ("*": any).
	SourceRepos []string `json:"sourceRepos,omitempty"`
	// Destinations are the clusters (server URL or name) and namespaces apps
	// may deploy to; globs, and a leading "!" denies.
	Destinations []ApplicationDestination `json:"destinations,omitempty"`
	// ClusterResourceWhitelist are the cluster-scoped objects apps may
	// deploy, by group and kind (globs) and, when an entry names one, by
	// name (a glob); none when empty.
	ClusterResourceWhitelist []ClusterResourceRestrictionItem `json:"clusterResourceWhitelist,omitempty"`
	// ClusterResourceBlacklist are the cluster-scoped objects apps may not
	// deploy, by group, kind and, when an entry names one, name.
	ClusterResourceBlacklist []ClusterResourceRestrictionItem `json:"clusterResourceBlacklist,omitempty"`
	// NamespaceResourceWhitelist, when set, are the only namespaced kinds
	// apps may deploy.
	NamespaceResourceWhitelist []metav1.GroupKind `json:"namespaceResourceWhitelist,omitempty"`
	// NamespaceResourceBlacklist are namespaced kinds apps may not deploy.
	NamespaceResourceBlacklist []metav1.GroupKind `json:"namespaceResourceBlacklist,omitempty"`
	// OrphanedResources reports live objects in the apps' namespaces that
	// no app manages.
	OrphanedResources *OrphanedResourcesMonitorSettings `json:"orphanedResources,omitempty"`
	// SyncWindows allow or deny syncs at times.
	SyncWindows []SyncWindow `json:"syncWindows,omitempty"`
	// SourceNamespaces are the namespaces whose Application objects may use
	// this project (apps in any namespace): globs, or regular expressions
	// between slashes ("/^team-[a-z]+$/"), as project.NamespacePermitted
	// matches them.
	SourceNamespaces []string `json:"sourceNamespaces,omitempty"`
	// DestinationServiceAccounts name the service account that syncs to a
	// destination impersonate, so an app can do no more than that account's
	// RBAC allows (Argo CD's sync impersonation).
	DestinationServiceAccounts []DestinationServiceAccount `json:"destinationServiceAccounts,omitempty"`
	// Roles are the project's RBAC roles: policy lines scoped to the
	// project and the SSO groups bound to them, enforced by package rbac,
	// and the project tokens issued for them (jwtTokens).
	Roles []ProjectRole `json:"roles,omitempty"`
	// PermitOnlyProjectScopedClusters, when true, lets the project's apps
	// deploy only to clusters scoped to the project (a cluster Secret whose
	// project key names it), among those its destinations allow. Default
	// false: any cluster its destinations allow.
	PermitOnlyProjectScopedClusters bool `json:"permitOnlyProjectScopedClusters,omitempty"`
	// SignatureKeys are the GnuPG key IDs the synced commit of every Git
	// source must be signed with: Argo CD's older form of SourceIntegrity,
	// read as one policy of mode head for every repository when
	// SourceIntegrity has no git policies (EffectiveSourceIntegrity).
	SignatureKeys []SignatureKey `json:"signatureKeys,omitempty"`
	// SourceIntegrity are the checks an app's sources must pass before they
	// are synced: GnuPG signatures of Git commits and tags, verified
	// against the keys of argocd-gpg-keys-cm (package source/integrity).
	// An app whose sources fail gets a ComparisonError condition and is not
	// synced.
	SourceIntegrity *SourceIntegrity `json:"sourceIntegrity,omitempty"`
}

// ClusterResourceRestrictionItem is an entry of an AppProject's cluster
// resource allow or deny list.
type ClusterResourceRestrictionItem struct {
	// Group is a glob of API groups ("" is the core group).
	Group string `json:"group"`
	// Kind is a glob of kinds.
	Kind string `json:"kind"`
	// Name, when set, is a glob (Go's path.Match syntax, "team1-*") of the
	// object names the entry matches; empty matches every name.
	Name string `json:"name,omitempty"`
}

// SignatureKey names a GnuPG key by its ID.
type SignatureKey struct {
	// KeyID is the key's ID: 16 hexadecimal digits, or the 40 of its
	// fingerprint.
	KeyID string `json:"keyID"`
}

// DestinationServiceAccount maps destinations (globs) to a service account:
// "name" (in the destination namespace) or "namespace:name".
type DestinationServiceAccount struct {
	// Server is a glob of the destination servers this entry applies to.
	Server string `json:"server"`
	// Namespace is a glob of the destination namespaces this entry applies to;
	// empty matches any.
	Namespace string `json:"namespace,omitempty"`
	// DefaultServiceAccount is the account syncs impersonate: "name" in the
	// destination namespace, or "namespace:name".
	DefaultServiceAccount string `json:"defaultServiceAccount"`
}

// OrphanedResourcesMonitorSettings turns on orphan reporting.
type OrphanedResourcesMonitorSettings struct {
	// Warn adds a warning condition to apps when orphans exist.
	Warn *bool `json:"warn,omitempty"`
	// Ignore are objects never reported.
	Ignore []OrphanedResourceKey `json:"ignore,omitempty"`
}

// OrphanedResourceKey matches objects by group, kind and name (globs).
type OrphanedResourceKey struct {
	// Group is a glob of the API groups never reported.
	Group string `json:"group,omitempty"`
	// Kind is a glob of the kinds never reported.
	Kind string `json:"kind,omitempty"`
	// Name is a glob of the object names never reported.
	Name string `json:"name,omitempty"`
}

// SyncWindow allows or denies syncs while its cron schedule's window is
// open: from each time the schedule fires, for Duration.
type SyncWindow struct {
	// Kind is "allow" or "deny".
	Kind string `json:"kind"`
	// Schedule is a five-field cron expression.
	Schedule string `json:"schedule"`
	// Duration is how long the window stays open ("1h", "30m").
	Duration string `json:"duration"`
	// Applications are globs of the application names the window applies
	// to. A window whose Applications, Namespaces and Clusters are all
	// empty applies to no app.
	Applications []string `json:"applications,omitempty"`
	// Namespaces are globs of the destination namespaces the window applies
	// to.
	Namespaces []string `json:"namespaces,omitempty"`
	// Clusters are globs of the destination clusters (server URL or name) the
	// window applies to.
	Clusters []string `json:"clusters,omitempty"`
	// ManualSync lets people sync by hand while a deny window is open.
	ManualSync bool `json:"manualSync,omitempty"`
	// TimeZone is an IANA zone for Schedule. Default UTC.
	TimeZone string `json:"timeZone,omitempty"`
	// Description says why the window exists, for people; the engine does not
	// read it.
	Description string `json:"description,omitempty"`
	// AndOperator makes the window's selectors all have to match (an app
	// whose name, namespace and cluster each match the lists that are
	// set), instead of any one of them.
	AndOperator bool `json:"andOperator,omitempty"`
	// SyncOverrun lets a sync that started while the window allowed it
	// run to its end after the window turns against it. The engine judges
	// windows when a sync starts, and a started sync always runs to its end,
	// so every window behaves as with SyncOverrun.
	SyncOverrun bool `json:"syncOverrun,omitempty"`
}
