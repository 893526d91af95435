package appstatus

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// Object is the Application as Argo CD tools see it: apiVersion, kind,
// metadata and spec of app and status st, as an unstructured map (maps,
// slices, strings, int64s, float64s, bools), converted by apimachinery's
// runtime.DefaultUnstructuredConverter as the API server's objects are. It
// is what Argo CD's notification triggers and templates call "app".
func Object(app *v1alpha1.Application, st ApplicationStatus) (map[string]any, error) {
	doc := struct {
		APIVersion string                   `json:"apiVersion"`
		Kind       string                   `json:"kind"`
		Metadata   metav1.ObjectMeta        `json:"metadata"`
		Spec       v1alpha1.ApplicationSpec `json:"spec"`
		Status     ApplicationStatus        `json:"status"`
	}{v1alpha1.APIVersion, v1alpha1.ApplicationKind, app.ObjectMeta, app.Spec, st}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&doc)
	if err != nil {
		return nil, fmt.Errorf("application %s: %w", v1alpha1.KeyOf(app), err)
	}
	return out, nil
}
