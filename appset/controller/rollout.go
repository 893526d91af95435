package controller

import (
	"context"
	"fmt"
	"slices"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/engine"
)

// rollout advances a RollingSync (st.mu held): it returns the step in
// progress (-1: every step's Applications are Synced and Healthy). The
// rules, Argo CD's progressive sync:
//   - a step holds the owned Applications whose labels match all its
//     matchExpressions (In / NotIn); steps without Applications are
//     skipped;
//   - the first step with an Application not Synced and Healthy is in
//     progress; later steps wait;
//   - in that step, OutOfSync Applications are synced (with the prune of
//     their template's automated policy), at most maxUpdate at once
//     (counting syncs in flight and synced Applications not yet Healthy;
//     a percentage of the step's size, rounded down but at least one;
//     default all); an Application synced by the rollout that goes
//     OutOfSync again (a new commit) is synced again;
//   - only the Applications this replica owns (Engine.Apps().Owns, with a
//     Sharder) are synced here; another replica's wait in their step.
func (r *Runner) rollout(ctx context.Context, st *setState) (int, error) {
	steps := st.set.Spec.Strategy.RollingSync.Steps
	for i, step := range steps {
		var members []string
		for name, a := range st.owned {
			if appset.StepSelects(step, a.Labels) {
				members = append(members, name)
			}
		}
		if len(members) == 0 {
			continue
		}
		slices.Sort(members)
		var waiting []string
		inflight := 0
		for _, n := range members {
			s, known := r.eng.Apps().AppStatus(v1alpha1.KeyOf(st.owned[n]))
			switch {
			case st.syncing[n]:
				inflight++
			case r.appDone(v1alpha1.KeyOf(st.owned[n])):
				delete(st.rolled, n)
			case st.rolled[n] && !(known && s.Sync == appstatus.OutOfSync):
				inflight++ // synced, not yet Healthy
			default:
				waiting = append(waiting, n)
			}
		}
		if inflight == 0 && len(waiting) == 0 {
			continue
		}
		limit, err := appset.MaxUpdate(step.MaxUpdate, len(members))
		if err != nil {
			return i, fmt.Errorf("applicationset %q: strategy.rollingSync.steps[%d].maxUpdate: %w", st.set.Name, i, err)
		}
		for _, n := range waiting {
			if inflight >= limit {
				break
			}
			app := st.owned[n]
			if !r.eng.Apps().Owns(v1alpha1.KeyOf(app)) {
				continue // another replica's: its status is not read here
			}
			s, ok := r.eng.Apps().AppStatus(v1alpha1.KeyOf(app))
			if !ok || s.Sync != appstatus.OutOfSync {
				continue // not compared yet, or in sync and not yet Healthy: the step waits for it
			}
			prune := st.prune[n]
			st.syncing[n] = true
			inflight++
			st.syncs.Add(1)
			go func() {
				defer st.syncs.Done()
				_, err := r.eng.Sync(ctx, app, engine.SyncRequest{Prune: prune})
				st.mu.Lock()
				delete(st.syncing, n)
				if err == nil {
					st.rolled[n] = true
				} else {
					r.opts.Log.Info("applicationset rollout sync failed", "applicationset", st.set.Name, "app", n, "error", err.Error())
				}
				current := st.owned[n]
				st.mu.Unlock()
				if current != nil {
					_ = r.eng.Apps().Upsert(*current) // refresh it now
				}
				select {
				case st.hint <- struct{}{}:
				default:
				}
			}()
		}
		return i, nil
	}
	return -1, nil
}
