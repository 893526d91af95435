package appstatus

import "github.com/kubegitops/gitops/apis/v1alpha1"

// The status types are the model's (package apis/v1alpha1); these aliases
// keep this package's names.
type (
	// Operation is v1alpha1.Operation: the Application's "operation".
	Operation = v1alpha1.Operation
	// SyncOperation is v1alpha1.SyncOperation.
	SyncOperation = v1alpha1.SyncOperation
	// SyncOperationResource is v1alpha1.SyncOperationResource.
	SyncOperationResource = v1alpha1.SyncOperationResource
	// OperationInitiator is v1alpha1.OperationInitiator.
	OperationInitiator = v1alpha1.OperationInitiator
	// Info is v1alpha1.Info.
	Info = v1alpha1.Info
	// ApplicationStatus is v1alpha1.ApplicationStatus.
	ApplicationStatus = v1alpha1.ApplicationStatus
	// SyncStatus is v1alpha1.SyncStatus.
	SyncStatus = v1alpha1.SyncStatus
	// HealthStatus is v1alpha1.HealthStatus.
	HealthStatus = v1alpha1.HealthStatus
	// ResourceStatus is v1alpha1.ResourceStatus.
	ResourceStatus = v1alpha1.ResourceStatus
	// ApplicationCondition is v1alpha1.ApplicationCondition.
	ApplicationCondition = v1alpha1.ApplicationCondition
	// OperationState is v1alpha1.OperationState.
	OperationState = v1alpha1.OperationState
	// SyncOperationResult is v1alpha1.SyncOperationResult.
	SyncOperationResult = v1alpha1.SyncOperationResult
	// ResourceResult is v1alpha1.ResourceResult.
	ResourceResult = v1alpha1.ResourceResult
	// RevisionHistory is v1alpha1.RevisionHistory.
	RevisionHistory = v1alpha1.RevisionHistory
)
