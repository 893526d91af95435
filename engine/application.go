package engine

import "github.com/kubegitops/gitops/apis/v1alpha1"

// The Argo CD model lives in package apis/v1alpha1; these aliases keep the
// names the engine has always used, so host code written against them
// compiles unchanged. See that package for each type's documentation.
type (
	// Application is v1alpha1.Application: an Argo CD Application.
	Application = v1alpha1.Application
	// ApplicationList is v1alpha1.ApplicationList.
	ApplicationList = v1alpha1.ApplicationList
	// ApplicationSpec is v1alpha1.ApplicationSpec.
	ApplicationSpec = v1alpha1.ApplicationSpec
	// ApplicationSource is v1alpha1.ApplicationSource.
	ApplicationSource = v1alpha1.ApplicationSource
	// ApplicationSourceHelm is v1alpha1.ApplicationSourceHelm.
	ApplicationSourceHelm = v1alpha1.ApplicationSourceHelm
	// HelmParameter is v1alpha1.HelmParameter.
	HelmParameter = v1alpha1.HelmParameter
	// HelmFileParameter is v1alpha1.HelmFileParameter.
	HelmFileParameter = v1alpha1.HelmFileParameter
	// ApplicationSourceKustomize is v1alpha1.ApplicationSourceKustomize.
	ApplicationSourceKustomize = v1alpha1.ApplicationSourceKustomize
	// KustomizeReplica is v1alpha1.KustomizeReplica.
	KustomizeReplica = v1alpha1.KustomizeReplica
	// KustomizePatch is v1alpha1.KustomizePatch.
	KustomizePatch = v1alpha1.KustomizePatch
	// KustomizeSelector is v1alpha1.KustomizeSelector.
	KustomizeSelector = v1alpha1.KustomizeSelector
	// ApplicationSourceDirectory is v1alpha1.ApplicationSourceDirectory.
	ApplicationSourceDirectory = v1alpha1.ApplicationSourceDirectory
	// ApplicationSourceJsonnet is v1alpha1.ApplicationSourceJsonnet.
	ApplicationSourceJsonnet = v1alpha1.ApplicationSourceJsonnet
	// JsonnetVar is v1alpha1.JsonnetVar.
	JsonnetVar = v1alpha1.JsonnetVar
	// ApplicationSourcePlugin is v1alpha1.ApplicationSourcePlugin.
	ApplicationSourcePlugin = v1alpha1.ApplicationSourcePlugin
	// EnvEntry is v1alpha1.EnvEntry.
	EnvEntry = v1alpha1.EnvEntry
	// ApplicationSourcePluginParameter is
	// v1alpha1.ApplicationSourcePluginParameter.
	ApplicationSourcePluginParameter = v1alpha1.ApplicationSourcePluginParameter
	// ApplicationDestination is v1alpha1.ApplicationDestination.
	ApplicationDestination = v1alpha1.ApplicationDestination
	// SyncPolicy is v1alpha1.SyncPolicy.
	SyncPolicy = v1alpha1.SyncPolicy
	// SyncPolicyAutomated is v1alpha1.SyncPolicyAutomated.
	SyncPolicyAutomated = v1alpha1.SyncPolicyAutomated
	// RetryStrategy is v1alpha1.RetryStrategy.
	RetryStrategy = v1alpha1.RetryStrategy
	// Backoff is v1alpha1.Backoff.
	Backoff = v1alpha1.Backoff
	// ManagedNamespaceMetadata is v1alpha1.ManagedNamespaceMetadata.
	ManagedNamespaceMetadata = v1alpha1.ManagedNamespaceMetadata
	// ResourceIgnoreDifferences is v1alpha1.ResourceIgnoreDifferences.
	ResourceIgnoreDifferences = v1alpha1.ResourceIgnoreDifferences
	// Info is v1alpha1.Info: a name and value of spec.info.
	Info = v1alpha1.Info
)
