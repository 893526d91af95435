package engine

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

	"github.com/kubegitops/gitops/apis/v1alpha1"
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
// value in cur, the app as Run holds it now (appset.KeepIgnoredDifferences).
func (e *Engine) keepIgnoredAppFields(ctx context.Context, set *appset.ApplicationSet, generated, cur *Application) (*Application, error) {
	if len(set.Spec.IgnoreApplicationDifferences) == 0 {
		return generated, nil
	}
	gen, err := v1alpha1.ApplicationToUnstructured(generated)
	if err != nil {
		return nil, fmt.Errorf("applicationset %q: application %q: %w", set.Name, generated.Name, err)
	}
	curObj, err := v1alpha1.ApplicationToUnstructured(cur)
	if err != nil {
		return nil, fmt.Errorf("applicationset %q: application %q: %w", set.Name, generated.Name, err)
	}
	out, err := appset.KeepIgnoredDifferences(ctx, set, gen, curObj)
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

// upsertOwned writes an update of an app the set owns, keeping the fields
// its ignoreApplicationDifferences name at the values of the app Run holds.
// The write is a compare-and-swap on that app, retried when another writer
// upserted it between the read and the write, so their change is not
// lost. changed is false when the app already is what the set wants.
func (e *Engine) upsertOwned(ctx context.Context, set *appset.ApplicationSet, generated, prev *Application) (out *Application, changed bool, err error) {
	r := e.running()
	if r == nil {
		return nil, false, ErrNotRunning
	}
	for attempt := 0; attempt < 5; attempt++ {
		held := e.currentApp(e.AppKey(generated), nil) // nil: Run does not hold it
		cur := held
		if cur == nil {
			cur = prev
		}
		a := generated
		if len(set.Spec.IgnoreApplicationDifferences) > 0 {
			if a, err = e.keepIgnoredAppFields(ctx, set, generated, cur); err != nil {
				return nil, false, err
			}
		}
		if reflect.DeepEqual(cur, a) {
			return a, false, nil
		}
		if err := validateApp(a); err != nil {
			return nil, false, err
		}
		cp := *a
		if r.addIf(&cp, held) {
			return &cp, true, nil
		}
	}
	return nil, false, fmt.Errorf("applicationset %q: application %q: kept changing under other writers", set.Name, generated.Name)
}
