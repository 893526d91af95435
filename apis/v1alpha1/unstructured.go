package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// ApplicationToUnstructured is app as an unstructured object, through
// apimachinery's runtime.DefaultUnstructuredConverter (integers stay int64,
// as the API server's objects have them), with its apiVersion and kind set.
// An error names the app.
func ApplicationToUnstructured(app *Application) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
	if err != nil {
		return nil, fmt.Errorf("application %s: %w", KeyOf(app), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(APIVersion)
	u.SetKind(ApplicationKind)
	return u, nil
}
