package appstatus

import (
	"encoding/json"
	"fmt"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// Object is the Application as Argo CD tools see it: apiVersion, kind,
// metadata and spec of app and status st, as a JSON-shaped map (maps,
// slices, strings, float64s, bools). It is what Argo CD's notification
// triggers and templates call "app".
func Object(app *v1alpha1.Application, st ApplicationStatus) (map[string]any, error) {
	doc := struct {
		APIVersion string                   `json:"apiVersion"`
		Kind       string                   `json:"kind"`
		Metadata   any                      `json:"metadata"`
		Spec       v1alpha1.ApplicationSpec `json:"spec"`
		Status     ApplicationStatus        `json:"status"`
	}{"argoproj.io/v1alpha1", "Application", app.ObjectMeta, app.Spec, st}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("application %s: %w", app.Name, err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("application %s: %w", app.Name, err)
	}
	return out, nil
}
