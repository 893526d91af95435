package controller

import (
	"slices"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/engine"
)

// Timing is what a running Reconciler may take again (SetTiming): the
// intervals and the self-heal backoff, which Argo CD's argocd-cm and
// argocd-cmd-params-cm set.
type Timing struct {
	// Interval, HardInterval and SelfHealTimeout are as in Options.
	Interval, HardInterval, SelfHealTimeout time.Duration
	// SelfHealBackoff, when set, is the self-heal backoff
	// (Options.SelfHealBackoff).
	SelfHealBackoff *autosync.Backoff
	// RepoErrorGracePeriod, when positive, is how long an app's failing
	// render leaves its status as it was (Argo CD's
	// controller.repo.error.grace.period.seconds): the first failure, and
	// the failures that follow within the period, are retried without
	// writing the error; a hard refresh reports it at once. Zero: at once.
	RepoErrorGracePeriod time.Duration
}

// SetTiming replaces the reconciler's intervals and self-heal backoff; the
// next reconcile of each app uses them. Zero fields take Options' defaults.
func (r *Reconciler) SetTiming(t Timing) {
	d := DefaultOptions()
	if t.Interval == 0 {
		t.Interval = d.Interval
	}
	if t.SelfHealTimeout <= 0 {
		t.SelfHealTimeout = d.SelfHealTimeout
	}
	r.timing.Store(&t)
}

// times returns the timing in force.
func (r *Reconciler) times() *Timing { return r.timing.Load() }

// inRepoErrorGrace reports whether a refresh that failed rendering (st,
// err) leaves the status as it was: Timing.RepoErrorGracePeriod is set, the
// refresh is not a hard one, and this is the app's first such failure or
// one within the period since it; a refresh that did not fail so ends the
// period.
func (r *Reconciler) inRepoErrorGrace(app *v1alpha1.Application, st appstatus.Status, err error, hard bool) bool {
	grace := r.times().RepoErrorGracePeriod
	key := nameOf(app)
	if grace <= 0 || !engine.KeepsLastGood(st, err) || !slices.ContainsFunc(st.Conditions, func(c appstatus.Condition) bool {
		return c.Type == appstatus.ConditionComparisonError
	}) {
		r.repoErrors.Delete(key)
		return false
	}
	if hard {
		return false
	}
	first, seen := r.repoErrors.LoadOrStore(key, r.now())
	return !seen || r.now().Sub(first.(time.Time)) <= grace
}
