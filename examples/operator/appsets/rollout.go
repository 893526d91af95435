package appsets

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The progress of an Application in a RollingSync
// (status.applicationStatus[].status), Argo CD's names.
const (
	// RolloutWaiting: not Synced and Healthy, and no sync asked for yet.
	RolloutWaiting = "Waiting"
	// RolloutPending: the set wrote a sync operation that has not run yet.
	RolloutPending = "Pending"
	// RolloutProgressing: the set's sync ran; the Application is not yet
	// Synced and Healthy (or the sync failed). It waits for a new revision
	// to be synced again (status.applicationStatus[].targetRevisions are
	// the revisions the sync was asked at).
	RolloutProgressing = "Progressing"
	// RolloutHealthy: Synced and Healthy.
	RolloutHealthy = "Healthy"
)

// SyncInitiator is the username of the syncs a RollingSync asks for, as
// Argo CD's ApplicationSet controller writes it.
const SyncInitiator = "applicationset-controller"

// rolloutResult is a RollingSync's state after one reconcile.
type rolloutResult struct {
	// step is the step in progress, 0-based; -1 when every step is done.
	step      int
	statuses  []v1alpha1.ApplicationSetApplicationStatus
	failures  []failure
	transient bool
}

// rollout advances the set's RollingSync over its generated Applications
// (Argo CD's progressive sync; the rules are in the package doc). Each
// Application belongs to the first step whose matchExpressions select it.
func (r *Reconciler) rollout(ctx context.Context, set *v1alpha1.ApplicationSet, out applied) rolloutResult {
	steps := set.Spec.Strategy.RollingSync.Steps
	prev := map[string]v1alpha1.ApplicationSetApplicationStatus{}
	for _, s := range set.Status.ApplicationStatus {
		prev[s.Application] = s
	}
	now := metav1.NewTime(r.now().Truncate(time.Second))
	members := make([][]string, len(steps))
	next := map[string]v1alpha1.ApplicationSetApplicationStatus{}
	for name, app := range out.apps {
		if !out.generated[name] || app.DeletionTimestamp != nil {
			continue
		}
		i := slices.IndexFunc(steps, func(s v1alpha1.ApplicationSetRolloutStep) bool { return appset.StepSelects(s, app.Labels) })
		if i < 0 {
			continue
		}
		members[i] = append(members[i], name)
		st := progress(app, prev[name], now)
		st.Step = strconv.Itoa(i + 1)
		next[name] = st
	}
	res := rolloutResult{step: -1}
	for i, names := range members {
		slices.Sort(names)
		inflight, done := 0, 0
		for _, n := range names {
			switch next[n].Status {
			case RolloutPending, RolloutProgressing:
				inflight++
			case RolloutHealthy:
				done++
			}
		}
		if done == len(names) {
			continue
		}
		res.step = i
		limit, err := appset.MaxUpdate(steps[i].MaxUpdate, len(names))
		if err != nil {
			res.failures = append(res.failures, failure{ReasonSyncApplicationError,
				&Error{Set: keyOf(set), Err: fmt.Errorf("strategy.rollingSync.steps[%d].maxUpdate: %w", i, err)}})
			break
		}
		for _, n := range names {
			if inflight >= limit {
				break
			}
			app := out.apps[n]
			if next[n].Status != RolloutWaiting || app.Status.Sync.Status != "OutOfSync" {
				continue // not compared yet, or in sync and not Healthy: the step waits for it
			}
			err := r.requestSync(ctx, app, out.prunes[n])
			switch {
			case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
				res.transient = true // the cache lagged behind; look again
				continue
			case err != nil:
				res.failures = append(res.failures, failure{ReasonSyncApplicationError, &Error{Set: keyOf(set), App: n, Err: err}})
				continue
			}
			inflight++
			st := transition(next[n], RolloutPending, "Application moved to Pending status, watching for the Application resource to start Progressing", now)
			st.TargetRevisions = revisions(app)
			next[n] = st
		}
		break
	}
	names := make([]string, 0, len(next))
	for n := range next {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		res.statuses = append(res.statuses, next[n])
	}
	return res
}

// progress is an Application's RollingSync state, from the state last
// written and the Application as it is now.
func progress(app *v1alpha1.Application, prev v1alpha1.ApplicationSetApplicationStatus, now metav1.Time) v1alpha1.ApplicationSetApplicationStatus {
	prev.Application = app.Name
	done := app.Status.Sync.Status == "Synced" && app.Status.Health.Status == "Healthy"
	op := app.Status.OperationState
	ours := op != nil && op.Operation.InitiatedBy.Username == SyncInitiator
	switch {
	case app.Operation != nil:
		// A sync asked for (by the set, or by someone) and not run yet.
		if prev.Status == RolloutPending || prev.Status == RolloutProgressing {
			return prev
		}
		return transition(prev, RolloutPending, "Application has a sync operation pending", now)
	case done:
		return transition(prev, RolloutHealthy, "Application resource is Synced and Healthy", now)
	case prev.Status == RolloutPending:
		if op == nil || (prev.LastTransitionTime != nil && op.StartedAt.Before(prev.LastTransitionTime)) {
			return prev // the controller has not run it yet
		}
		return transition(prev, RolloutProgressing, "Application resource became Progressing", now)
	case prev.Status == RolloutProgressing:
		if op == nil || op.FinishedAt == nil {
			return prev
		}
		if revs := revisions(app); app.Status.Sync.Status == "OutOfSync" && len(revs) > 0 && len(prev.TargetRevisions) > 0 &&
			!slices.Equal(revs, prev.TargetRevisions) {
			// A new revision since the sync (Argo CD's test): it needs
			// another. OutOfSync at the synced revision is the moment
			// before the refresh that follows a sync, or a sync that did
			// not converge: not synced again.
			return transition(prev, RolloutWaiting, "Application has pending changes, setting status to Waiting", now)
		}
		if ours && op.Phase != "Succeeded" && op.Phase != "Running" {
			return transition(prev, RolloutProgressing, "Application sync "+op.Phase+": "+op.Message, now)
		}
		return prev
	}
	return transition(prev, RolloutWaiting, "Application has pending changes, setting status to Waiting", now)
}

// revisions are the revisions an Application was last compared at.
func revisions(app *v1alpha1.Application) []string {
	if r := app.Status.Sync.Revisions; len(r) > 0 {
		return r
	}
	if r := app.Status.Sync.Revision; r != "" {
		return []string{r}
	}
	return nil
}

// transition sets a status and message; the transition time moves only
// when the status changes.
func transition(s v1alpha1.ApplicationSetApplicationStatus, status, message string, now metav1.Time) v1alpha1.ApplicationSetApplicationStatus {
	if s.Status != status || s.LastTransitionTime == nil {
		s.LastTransitionTime = &now
	}
	s.Status, s.Message = status, message
	return s
}

// requestSync writes a sync into the Application's operation field, as
// Argo CD's ApplicationSet controller does, guarded by the resourceVersion
// it was read at (so an operation written meanwhile is not overwritten
// and one sync is never asked for twice).
func (r *Reconciler) requestSync(ctx context.Context, app *v1alpha1.Application, prune bool) error {
	next := app.DeepCopy()
	next.Operation = &v1alpha1.Operation{
		Sync:        &v1alpha1.SyncOperation{Prune: prune},
		InitiatedBy: v1alpha1.OperationInitiator{Username: SyncInitiator, Automated: true},
		Info:        []v1alpha1.Info{{Name: "Reason", Value: "ApplicationSet RollingSync triggered a sync of this Application resource"}},
	}
	if sp := app.Spec.SyncPolicy; sp != nil {
		next.Operation.Sync.SyncOptions = sp.SyncOptions
		next.Operation.Retry = sp.Retry
	}
	if err := r.client.Patch(ctx, next, client.MergeFromWithOptions(app, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return err
		}
		return fmt.Errorf("request a sync: %w", err)
	}
	*app = *next
	return nil
}
