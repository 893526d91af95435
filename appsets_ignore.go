package gitops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/appset"
)

// currentApp is the app as Run holds it now (another writer may have
// upserted it since the set did), or prev when Run does not hold it.
func (e *Engine) currentApp(name string, prev *Application) *Application {
	if r := e.running(); r != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		if st, ok := r.apps[name]; ok {
			return st.app
		}
	}
	return prev
}

// keepIgnoredAppFields applies the set's ignoreApplicationDifferences to
// an update of an app the set owns: the fields the rules name keep their
// value in the app as Run holds it now (appset.KeepIgnoredDifferences).
func (e *Engine) keepIgnoredAppFields(ctx context.Context, set *appset.ApplicationSet, generated, prev *Application) (*Application, error) {
	if len(set.Spec.IgnoreApplicationDifferences) == 0 {
		return generated, nil
	}
	toObj := func(a *Application) (*unstructured.Unstructured, error) {
		js, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, err
		}
		u.SetAPIVersion("argoproj.io/v1alpha1")
		u.SetKind("Application")
		return u, nil
	}
	gen, err := toObj(generated)
	if err != nil {
		return nil, fmt.Errorf("applicationset %q: application %q: %w", set.Name, generated.Name, err)
	}
	cur, err := toObj(e.currentApp(generated.Name, prev))
	if err != nil {
		return nil, fmt.Errorf("applicationset %q: application %q: %w", set.Name, generated.Name, err)
	}
	out, err := appset.KeepIgnoredDifferences(ctx, set, gen, cur)
	if err != nil {
		return nil, err
	}
	js, err := out.MarshalJSON()
	if err != nil {
		return nil, err
	}
	apps, err := LoadApplications(bytes.NewReader(js))
	if err != nil || len(apps) != 1 {
		return nil, fmt.Errorf("applicationset %q: application %q: with ignoreApplicationDifferences kept: %w", set.Name, generated.Name, err)
	}
	return &apps[0], nil
}
