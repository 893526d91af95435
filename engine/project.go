package engine

import (
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/project"
)

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

// Project rules live in package project; these names keep the engine's
// API.

// ErrPolicy is wrapped by every *PolicyError (project.ErrPolicy).
var ErrPolicy = project.ErrPolicy

type (
	// PolicyError is project.PolicyError: which rule refused what.
	PolicyError = project.PolicyError
	// Policy is project.Policy: a host's own check of every object to
	// apply.
	Policy = project.Policy
	// WindowDecision is project.WindowDecision.
	WindowDecision = project.WindowDecision
)
