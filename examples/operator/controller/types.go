package controller

import (
	"github.com/kubegitops/gitops/appstatus"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersionKind is the kind the reconciler serves: Argo CD's Application.
var GroupVersionKind = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}

// The status the controller writes is Argo CD's, from package appstatus
// (which the notify package shares to give triggers Argo's "app").
type (
	Operation             = appstatus.Operation
	SyncOperation         = appstatus.SyncOperation
	SyncOperationResource = appstatus.SyncOperationResource
	OperationInitiator    = appstatus.OperationInitiator
	Info                  = appstatus.Info
	ApplicationStatus     = appstatus.ApplicationStatus
	SyncStatus            = appstatus.SyncStatus
	HealthStatus          = appstatus.HealthStatus
	ResourceStatus        = appstatus.ResourceStatus
	ApplicationCondition  = appstatus.ApplicationCondition
	OperationState        = appstatus.OperationState
	SyncOperationResult   = appstatus.SyncOperationResult
	ResourceResult        = appstatus.ResourceResult
	RevisionHistory       = appstatus.RevisionHistory
)
