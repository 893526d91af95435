package controller

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/engine"
)

// upsertNew adds an app the set just claimed, only while the engine's Run
// holds no app of its key (a host's app or another writer's that appeared
// since the set looked is never replaced).
func (r *Runner) upsertNew(a *engine.Application) error {
	wrote, err := r.eng.Apps().CompareAndUpsert(nil, *a)
	if err != nil {
		return err
	}
	if !wrote {
		return fmt.Errorf("%w (owned by Run's own apps)", ErrAppOwned)
	}
	return nil
}

// keepIgnoredAppFields applies the set's ignoreApplicationDifferences to
// an update of an app the set owns: the fields the rules name keep their
// value in cur, the app as Run holds it now (appset.KeepIgnoredDifferences).
func keepIgnoredAppFields(ctx context.Context, set *appset.ApplicationSet, generated, cur *engine.Application) (*engine.Application, error) {
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
	apps, err := engine.LoadApplications(bytes.NewReader(js))
	if err != nil || len(apps) != 1 {
		return nil, fmt.Errorf("applicationset %q: application %q: with ignoreApplicationDifferences kept: %w", set.Name, generated.Name, err)
	}
	return &apps[0], nil
}

// upsertOwned writes an update of an app the set owns, keeping the fields
// its ignoreApplicationDifferences name at the values of the app Run holds.
// The write is a compare-and-swap on that app (Engine.Apps().CompareAndUpsert),
// retried when another writer upserted it between the read and the
// write, so their change is not lost. changed is false when the app
// already is what the set wants.
func (r *Runner) upsertOwned(ctx context.Context, set *appset.ApplicationSet, generated, prev *engine.Application) (out *engine.Application, changed bool, err error) {
	if !r.eng.Apps().Running() {
		return nil, false, engine.ErrNotRunning
	}
	for attempt := 0; attempt < 5; attempt++ {
		var held *engine.Application // nil: Run does not hold it
		if cur, ok := r.eng.Apps().ManagedApp(v1alpha1.KeyOf(generated)); ok {
			held = &cur
		}
		cur := held
		if cur == nil {
			cur = prev
		}
		a := generated
		if len(set.Spec.IgnoreApplicationDifferences) > 0 {
			if a, err = keepIgnoredAppFields(ctx, set, generated, cur); err != nil {
				return nil, false, err
			}
		}
		if reflect.DeepEqual(cur, a) {
			return a, false, nil
		}
		cp := *a
		wrote, err := r.eng.Apps().CompareAndUpsert(held, cp)
		if err != nil {
			return nil, false, err
		}
		if wrote {
			return &cp, true, nil
		}
	}
	return nil, false, fmt.Errorf("applicationset %q: application %q: kept changing under other writers", set.Name, generated.Name)
}
