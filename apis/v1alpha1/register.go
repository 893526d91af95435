package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is Argo CD's API group.
const Group = "argoproj.io"

// Version is the API version of this package's kinds.
const Version = "v1alpha1"

// APIVersion is the apiVersion of manifests of this package's kinds.
const APIVersion = Group + "/" + Version

// The kinds of this package.
const (
	ApplicationKind    = "Application"
	AppProjectKind     = "AppProject"
	ApplicationSetKind = "ApplicationSet"
)

// SchemeGroupVersion is the group and version of this package's kinds.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// Resource returns the group-qualified resource of a plural name
// ("applications").
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// AddToScheme registers Application, AppProject and ApplicationSet and
// their lists with s, so that controller-runtime's and client-go's typed
// machinery can read and write them.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion,
		&Application{}, &ApplicationList{},
		&AppProject{}, &AppProjectList{},
		&ApplicationSet{}, &ApplicationSetList{},
	)
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
