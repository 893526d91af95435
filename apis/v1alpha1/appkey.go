package v1alpha1

import "strings"

// AppKey is an application's identity: its namespace and name, as Argo CD
// qualifies the apps of any namespace. Two apps of one name in two
// namespaces have two keys.
// +kubebuilder:object:generate=false
type AppKey struct {
	// Namespace is the Application's namespace; empty for an app given
	// without one.
	Namespace string `json:"namespace,omitempty"`
	// Name is the Application's name.
	Name string `json:"name"`
}

// KeyOf is app's key.
func KeyOf(app *Application) AppKey {
	return AppKey{Namespace: app.Namespace, Name: app.Name}
}

// String is Argo CD's qualified name: "namespace/name", or the bare name
// without a namespace.
func (k AppKey) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// Compare orders keys by namespace, then name: -1, 0 or +1 as k sorts
// before, with or after o (slices.SortFunc(keys, AppKey.Compare)).
func (k AppKey) Compare(o AppKey) int {
	if c := strings.Compare(k.Namespace, o.Namespace); c != 0 {
		return c
	}
	return strings.Compare(k.Name, o.Name)
}
