package engine

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/health"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
)

// Run reconciles the apps until ctx ends: each is refreshed every Interval
// (with jitter), when its repository reports a change (Hint), and when an
// object it manages changes in the cluster; apps with automated sync are
// synced when out of sync (with prune, selfHeal and allowEmpty as in Argo
// CD); Applications found in an app's rendered manifests join the managed
// apps (app of apps). Run returns ctx's error.
func (e *Engine) Run(ctx context.Context, apps []Application) error {
	r := &runner{
		e:          e,
		queue:      workqueue.NewTypedRateLimitingQueue(failureBackoff(e.parts().opts.Interval)),
		apps:       map[string]*appState{},
		parents:    map[string]bool{},
		subscribed: map[*clusterState]bool{},
	}
	for i := range apps {
		a := apps[i]
		r.add(&a, "")
	}
	if e.opts.Sharder != nil {
		// Before the runner is published: Owns reads it.
		r.owned = map[string]bool{}
	}
	e.mu.Lock()
	e.runner = r
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.runner = nil
		e.mu.Unlock()
	}()
	var wg gosync.WaitGroup
	if e.opts.Sharder != nil {
		r.followSharder(ctx, &wg)
	}
	for i := 0; i < e.opts.ReconcileWorkers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r.next(ctx) {
			}
		}()
	}
	<-ctx.Done()
	r.queue.ShutDown()
	wg.Wait()
	r.syncs.Wait()
	return ctx.Err()
}

// failureBackoff is the pace of retries of a failed refresh: 5 ms doubling
// up to the refresh interval (not the workqueue default's 1000 s, so an app
// whose cluster or repository comes back is seen within one interval),
// under an overall 10 per second, burst 100 bucket.
func failureBackoff(interval time.Duration) workqueue.TypedRateLimiter[string] {
	if interval <= 0 {
		interval = DefaultOptions().Interval // periodic refreshes off: retries still back off
	}
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, interval),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

func (r *runner) add(a *Application, parent string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(a, parent)
}

// addLocked is add with r.mu held.
func (r *runner) addLocked(a *Application, parent string) {
	key := r.e.instanceOf(a)
	if s, ok := r.apps[key]; ok {
		s.app, s.parent = a, parent
	} else {
		r.apps[key] = &appState{app: a, parent: parent, hardAt: time.Now()}
	}
	r.queue.Add(key)
}

// next reconciles one app; false when the queue is shut down.
func (r *runner) next(ctx context.Context) bool {
	name, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(name)
	again, failed := r.reconcile(ctx, name)
	switch {
	case failed:
		// A failed refresh comes back with the queue's exponential
		// backoff (5 ms doubling to 1000 s), not after a whole interval.
		r.queue.AddRateLimited(name)
	case again > 0:
		r.queue.Forget(name)
		r.queue.AddAfter(name, again)
	default:
		r.queue.Forget(name)
	}
	return true
}

// hardDue reports whether the app's next refresh is a hard one: its last
// hard refresh (or its joining Run) is Options.HardInterval old.
func (r *runner) hardDue(st *appState) bool {
	iv := r.e.parts().opts.HardInterval
	if iv <= 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(st.hardAt) >= iv
}

// nextRefresh is when to refresh the app again without other reason: the
// periodic interval with jitter, or sooner when its hard refresh falls due
// first (also with periodic refreshes off).
func (r *runner) nextRefresh(st *appState) time.Duration {
	next := r.jitter()
	if iv := r.e.parts().opts.HardInterval; iv > 0 {
		r.mu.Lock()
		due := max(time.Until(st.hardAt.Add(iv)), time.Millisecond)
		r.mu.Unlock()
		if next == 0 || due < next {
			next = due
		}
	}
	return next
}

func (r *runner) jitter() time.Duration {
	iv, j := r.e.parts().opts.Interval, r.e.parts().opts.Jitter
	if iv < 0 {
		return 0 // periodic refreshes are off: hints and events only
	}
	switch {
	case j == 0:
		j = iv / 10
	case j < 0:
		return iv
	}
	return iv + time.Duration(rand.Int64N(int64(j)+1))
}

// reconcile refreshes one app, syncs it when its policy says so, and
// returns when to look again (0: the app is gone) or that the refresh
// failed.
func (r *runner) reconcile(ctx context.Context, name string) (again time.Duration, failed bool) {
	// st.app is replaced under r.mu by Upsert: read it once, locked.
	r.mu.Lock()
	st, ok := r.apps[name]
	var app *Application
	resume := false
	if ok {
		app = st.app // add replaces it under the lock (Upsert, adopt)
		resume, st.resumeChecked = !st.resumeChecked, true
	}
	r.mu.Unlock()
	if !ok {
		return 0, false
	}
	if !r.owns(name) {
		return 0, false // its owner reconciles it; resharding queues it again here
	}
	if resume {
		// An operation a stopped process left is finished before the
		// app's first refresh, so the refresh sees its outcome.
		if _, resumed, err := r.e.Resume(ctx, app); err != nil {
			r.e.opts.Log.Info("resume failed", "app", name, "resumed", resumed, "error", err.Error())
		}
	}
	hard := r.hardDue(st)
	status, children, err := r.e.refresh(ctx, app, hard)
	if err != nil {
		r.e.opts.Log.V(1).Info("refresh failed", "app", name, "error", err.Error())
	}
	r.watchCluster(ctx, app)
	if err == nil {
		r.adopt(name, children)
	}
	kept := r.keepLastGood(st, status, err)
	if err != nil {
		r.record(st, app, kept)
		return 0, true
	}
	d, busy := r.decideAutoSync(st, app, status)
	if d.Condition != nil {
		// The status says why automated sync does not run (a failed
		// attempt of this revision), not only the last operation.
		kept.Conditions = append(slices.Clone(kept.Conditions), *d.Condition)
	}
	r.record(st, app, kept)
	if hard {
		r.mu.Lock()
		st.hardAt = time.Now()
		r.mu.Unlock()
	}
	if !busy {
		if wait := r.autoSync(ctx, name, st, app, status, d); wait > 0 {
			return wait, false
		}
	}
	return r.nextRefresh(st), false
}

// record keeps the status and tells the host: OnStatus each time, Notify
// what changed.
func (r *runner) record(st *appState, app *Application, status appstatus.Status) {
	r.mu.Lock()
	prev, had := st.status, st.hasState
	st.status, st.hasState = status, true
	r.mu.Unlock()
	r.e.notifyStatus(app, status)
	if !had || prev.Health.Code != status.Health.Code {
		r.e.notify(appstatus.Notification{Type: appstatus.NotifyHealthChanged, Key: v1alpha1.KeyOf(app), Revision: status.Revision, Health: status.Health.Code, Message: healthReason(status)})
	}
	if !had || prev.Sync != status.Sync {
		r.e.notify(appstatus.Notification{Type: appstatus.NotifySyncStatusChanged, Key: v1alpha1.KeyOf(app), Revision: status.Revision, Sync: status.Sync})
	}
	if status.Sync == appstatus.OutOfSync && (!had || prev.Sync != appstatus.OutOfSync) {
		r.e.notify(appstatus.Notification{Type: appstatus.NotifyOutOfSync, Key: v1alpha1.KeyOf(app), Revision: status.Revision})
	}
}

// healthReason says why an app has its health: the aggregated message
// (which names the worst resources), else, for an app whose health is not
// known or is degraded without one, its conditions (the refresh's error).
func healthReason(st appstatus.Status) string {
	if st.Health.Message != "" || (st.Health.Code != health.Unknown && st.Health.Code != health.Degraded) {
		return st.Health.Message
	}
	parts := make([]string, 0, len(st.Conditions))
	for _, c := range st.Conditions {
		parts = append(parts, string(c.Type)+": "+c.Message)
	}
	return strings.Join(parts, "; ")
}

// hasError is appstatus.HasError.
func hasError(cs []appstatus.Condition) bool { return appstatus.HasError(cs) }

// watchCluster subscribes once per cluster to its changes: a change to an
// object an app manages queues that app (debounced by the cache's
// batching and the queue's dedup), which is how drift is seen and healed.
func (r *runner) watchCluster(ctx context.Context, app *Application) {
	cs, err := r.e.cluster(ctx, app.Spec.Destination)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subscribed[cs] {
		return
	}
	r.subscribed[cs] = true
	unsubscribe := cs.Cache().Subscribe(func(ev cache.Event) {
		if ev.App == "" {
			return
		}
		r.mu.Lock()
		_, managed := r.apps[ev.App]
		r.mu.Unlock()
		if managed {
			r.queue.AddAfter(ev.App, 200*time.Millisecond)
		}
	})
	go func() { <-ctx.Done(); unsubscribe() }()
}

// adopt makes the Applications rendered by a parent managed apps, and drops
// the children it no longer renders. An app that renders none and rendered
// none before costs nothing: a fleet of 10,000 apps spent 5% of the
// engine's time scanning every app on every reconcile for children.
func (r *runner) adopt(parent string, children []*Application) {
	r.mu.Lock()
	had := r.parents[parent]
	if len(children) > 0 {
		r.parents[parent] = true
	} else {
		delete(r.parents, parent)
	}
	r.mu.Unlock()
	if !had && len(children) == 0 {
		return
	}
	keep := map[string]bool{}
	for _, c := range children {
		keep[r.e.instanceOf(c)] = true
		r.add(c, parent)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, st := range r.apps {
		if st.parent == parent && !keep[name] {
			delete(r.apps, name)
		}
	}
}
