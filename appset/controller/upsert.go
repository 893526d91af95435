package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	gitops "github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
)

// upsertNew adds an app the set just claimed, only while the engine's Run
// holds no app of its key (a host's app or another writer's that appeared
// since the set looked is never replaced).
func (r *Runner) upsertNew(a *gitops.Application) error {
	wrote, err := r.eng.CompareAndUpsert(nil, *a)
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
func keepIgnoredAppFields(ctx context.Context, set *appset.ApplicationSet, generated, cur *gitops.Application) (*gitops.Application, error) {
	if len(set.Spec.IgnoreApplicationDifferences) == 0 {
		return generated, nil
	}
	toObj := func(a *gitops.Application) (*unstructured.Unstructured, error) {
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
	curObj, err := toObj(cur)
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
	apps, err := gitops.LoadApplications(bytes.NewReader(js))
	if err != nil || len(apps) != 1 {
		return nil, fmt.Errorf("applicationset %q: application %q: with ignoreApplicationDifferences kept: %w", set.Name, generated.Name, err)
	}
	return &apps[0], nil
}

// upsertOwned writes an update of an app the set owns, keeping the fields
// its ignoreApplicationDifferences name at the values of the app Run holds.
// The write is a compare-and-swap on that app (Engine.CompareAndUpsert),
// retried when another writer upserted it between the read and the
// write, so their change is not lost. changed is false when the app
// already is what the set wants.
func (r *Runner) upsertOwned(ctx context.Context, set *appset.ApplicationSet, generated, prev *gitops.Application) (out *gitops.Application, changed bool, err error) {
	if !r.eng.Running() {
		return nil, false, gitops.ErrNotRunning
	}
	for attempt := 0; attempt < 5; attempt++ {
		var held *gitops.Application // nil: Run does not hold it
		if cur, ok := r.eng.ManagedApp(v1alpha1.KeyOf(generated)); ok {
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
		wrote, err := r.eng.CompareAndUpsert(held, cp)
		if err != nil {
			return nil, false, err
		}
		if wrote {
			return &cp, true, nil
		}
	}
	return nil, false, fmt.Errorf("applicationset %q: application %q: kept changing under other writers", set.Name, generated.Name)
}
