package controller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/health"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// reconcileSet generates a set and applies its policies; true when a
// rollout or a deletion is in progress (look again soon).
func (r *Runner) reconcileSet(ctx context.Context, st *setState) bool {
	set := &st.set
	res, genErr := st.runner.Generate(ctx, set)
	if genErr != nil {
		r.opts.Log.Info("applicationset generation failed", "applicationset", set.Name, "error", genErr.Error())
	}
	policy := appset.PolicySync
	preserve := false
	if p := set.Spec.SyncPolicy; p != nil {
		if p.ApplicationsSync != nil {
			policy = *p.ApplicationsSync
		}
		preserve = p.PreserveResourcesOnDeletion
	}
	update := policy == appset.PolicySync || policy == appset.PolicyCreateUpdate
	del := (policy == appset.PolicySync || policy == appset.PolicyCreateDelete) && genErr == nil
	rolling := set.Spec.Strategy != nil && set.Spec.Strategy.Type == "RollingSync"

	desired, prunes, loadErrs := r.desiredApps(set, res.Applications, rolling)
	errs := append([]error{genErr}, loadErrs...)

	st.mu.Lock()
	defer st.mu.Unlock()
	errs = append(errs, r.upsertDesired(ctx, st, desired, prunes, update)...)
	if del {
		errs = append(errs, r.removeUndesired(st, desired, preserve)...)
	}
	errs = append(errs, r.deleteRemoved(ctx, st)...)
	step := -1
	if rolling {
		var err error
		step, err = r.rollout(ctx, st)
		errs = append(errs, err)
	}
	st.status = Status{Applications: sortedKeys(st.owned), Err: errors.Join(errs...), Step: step,
		Deleting: sortedKeys(st.deleting), Reconciles: st.status.Reconciles + 1}
	return len(st.deleting) > 0 || step >= 0
}

// desiredApps loads the generated Applications, by key (appKey); under a
// RollingSync their automated sync is taken off (prunes keeps its prune
// for the rollout's syncs).
func (r *Runner) desiredApps(set *appset.ApplicationSet, generated []*unstructured.Unstructured, rolling bool) (desired map[string]*engine.Application, prunes map[string]bool, errs []error) {
	desired, prunes = map[string]*engine.Application{}, map[string]bool{}
	for _, u := range generated {
		js, err := u.MarshalJSON()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		apps, err := engine.LoadApplications(bytes.NewReader(js))
		if err != nil || len(apps) != 1 {
			errs = append(errs, fmt.Errorf("applicationset %q: application %q: %w", set.Name, u.GetName(), err))
			continue
		}
		a := apps[0]
		if rolling && a.Spec.SyncPolicy != nil && a.Spec.SyncPolicy.Automated != nil {
			prunes[appKey(&a)] = a.Spec.SyncPolicy.Automated.Prune
			sp := *a.Spec.SyncPolicy
			sp.Automated = nil
			a.Spec.SyncPolicy = &sp
		}
		desired[appKey(&a)] = &a
	}
	return desired, prunes, errs
}

// upsertDesired writes the desired apps (st.mu held): new ones the set
// can claim, and updates of its own when the policy updates.
func (r *Runner) upsertDesired(ctx context.Context, st *setState, desired map[string]*engine.Application, prunes map[string]bool, update bool) (errs []error) {
	set := &st.set
	for name, a := range desired {
		prev, ok := st.owned[name]
		if ok && !update {
			continue
		}
		if ok {
			out, changed, err := r.upsertOwned(ctx, set, a, prev)
			if err != nil {
				errs = append(errs, fmt.Errorf("applicationset %q: application %q: %w", set.Name, name, err))
				continue
			}
			if changed {
				st.owned[name] = out
				st.prune[name] = prunes[name]
				delete(st.deleting, name)
			}
			continue
		}
		_, held := r.eng.Apps().ManagedApp(v1alpha1.KeyOf(a))
		if owner, mine := r.claim(name, st.key); !mine || held {
			if mine {
				r.release(name, st.key)
				owner = "Run's own apps"
			}
			errs = append(errs, fmt.Errorf("applicationset %q: application %q: %w (owned by %s)", set.Name, name, ErrAppOwned, owner))
			continue
		}
		if err := r.upsertNew(a); err != nil {
			r.release(name, st.key)
			errs = append(errs, fmt.Errorf("applicationset %q: application %q: %w", set.Name, name, err))
			continue
		}
		st.owned[name] = a
		st.prune[name] = prunes[name]
		delete(st.deleting, name)
	}
	return errs
}

// removeUndesired takes the apps the set owns and no longer generates out
// of the engine's Run (st.mu held); those with the resources-finalizer
// are deleted next (unless preserve).
func (r *Runner) removeUndesired(st *setState, desired map[string]*engine.Application, preserve bool) (errs []error) {
	for name, a := range st.owned {
		if _, ok := desired[name]; ok {
			continue
		}
		if err := r.eng.Apps().Remove(v1alpha1.KeyOf(a)); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(st.owned, name)
		r.release(name, st.key)
		delete(st.rolled, name)
		delete(st.prune, name)
		if !preserve && hasResourcesFinalizer(a) {
			st.deleting[name] = a
		}
	}
	return errs
}

// deleteRemoved goes on deleting the objects of the apps removed with the
// resources-finalizer (st.mu held), until each deletion is done.
func (r *Runner) deleteRemoved(ctx context.Context, st *setState) (errs []error) {
	for name, a := range st.deleting {
		res, err := r.eng.Delete(ctx, a, engine.DeleteRequest{Propagation: finalizerPropagation(a)})
		if err != nil {
			errs = append(errs, fmt.Errorf("applicationset %q: %w", st.set.Name, err))
			continue
		}
		if res.Done() {
			delete(st.deleting, name)
		}
	}
	return errs
}

// appKey is how the runner names an app in its maps and its errors: the
// app's key as a string (v1alpha1.AppKey.String: "namespace/name", or the
// bare name without a namespace).
func appKey(a *engine.Application) string {
	return v1alpha1.KeyOf(a).String()
}

// sortedKeys are the keys of the apps of m, sorted.
func sortedKeys(m map[string]*engine.Application) []v1alpha1.AppKey {
	out := make([]v1alpha1.AppKey, 0, len(m))
	for _, a := range m {
		out = append(out, v1alpha1.KeyOf(a))
	}
	slices.SortFunc(out, v1alpha1.AppKey.Compare)
	return out
}

func hasResourcesFinalizer(a *engine.Application) bool {
	return slices.ContainsFunc(a.Finalizers, func(f string) bool {
		return f == ResourcesFinalizer || strings.HasPrefix(f, ResourcesFinalizer+"/")
	})
}

func finalizerPropagation(a *engine.Application) metav1.DeletionPropagation {
	if slices.Contains(a.Finalizers, ResourcesFinalizer+"/background") {
		return metav1.DeletePropagationBackground
	}
	return metav1.DeletePropagationForeground
}

// appDone reports whether the engine's Run last saw the app of key
// Synced and Healthy.
func (r *Runner) appDone(key v1alpha1.AppKey) bool {
	s, ok := r.eng.Apps().AppStatus(key)
	return ok && s.Sync == appstatus.Synced && s.Health.Code == health.Healthy
}
