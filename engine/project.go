package engine

import "github.com/kubegitops/gitops/apis/v1alpha1"

// The AppProject model lives in package apis/v1alpha1 and its rules in
// package project; these aliases keep the engine's names.
type (
	// Project is v1alpha1.AppProject: an Argo CD AppProject.
	Project = v1alpha1.AppProject
	// ProjectSpec is v1alpha1.AppProjectSpec.
	ProjectSpec = v1alpha1.AppProjectSpec
	// DestinationServiceAccount is v1alpha1.DestinationServiceAccount.
	DestinationServiceAccount = v1alpha1.DestinationServiceAccount
	// OrphanedResourcesMonitorSettings is
	// v1alpha1.OrphanedResourcesMonitorSettings.
	OrphanedResourcesMonitorSettings = v1alpha1.OrphanedResourcesMonitorSettings
	// OrphanedResourceKey is v1alpha1.OrphanedResourceKey.
	OrphanedResourceKey = v1alpha1.OrphanedResourceKey
	// SyncWindow is v1alpha1.SyncWindow.
	SyncWindow = v1alpha1.SyncWindow
)
