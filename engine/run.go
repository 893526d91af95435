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
	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/source"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
)

// windowRecheck is how often an automated sync blocked by a sync window is
// tried again.
const windowRecheck = 30 * time.Second

// runner is the state of Run: the managed apps, their last status and the
// memory automated sync needs.
type runner struct {
	e     *Engine
	queue workqueue.TypedRateLimitingInterface[string]
	// syncs are the automated syncs in flight; Run waits for them.
	syncs gosync.WaitGroup

	mu         gosync.Mutex
	apps       map[string]*appState
	subscribed map[*clusterState]bool
	// parents are the apps whose last render held Applications (app of
	// apps): only their reconciles scan apps for children to drop.
	parents map[string]bool
	// owned are the top-level apps the Sharder gives this replica; nil
	// without a Sharder (every app is owned).
	owned map[string]bool
}

type appState struct {
	app      *Application
	parent   string // the app whose render holds this one (app of apps)
	status   appstatus.Status
	hasState bool
	// good is the status of the last refresh that made its comparison;
	// it is kept through failures that say nothing of the live state.
	good    appstatus.Status
	hasGood bool
	// auto remembers the last automated sync (autosync.Decide's record);
	// nil before the first.
	auto *autosync.Record
	// resumeChecked records that Resume ran before the app's first
	// refresh.
	resumeChecked bool
	// hardAt is when the app last had a hard refresh, or joined Run
	// (Options.HardInterval).
	hardAt time.Time
	// syncing is set while an automated sync of the app runs.
	syncing bool
	// healNoted is the self-heal (revision and attempt) whose backoff was
	// last announced (NotifySelfHealBackoff), so each is announced once.
	healNoted string
}

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

// Hint asks a running engine to refresh at once every app that uses the
// repository (a webhook or poller saw a push), and tells the OnHint
// subscribers (the ApplicationSet controller generates at once the sets
// whose git generators read it). Matching ignores URL spelling (scheme,
// user, .git suffix).
func (e *Engine) Hint(repoURL string) {
	e.notifyHint(repoURL)
	e.mu.Lock()
	r := e.runner
	e.mu.Unlock()
	if r == nil {
		return
	}
	key := source.RepositoryKey(repoURL)
	r.mu.Lock()
	var names []string
	urls := map[string]bool{} // the spellings of the repository apps use
	for name, st := range r.apps {
		for _, src := range st.app.Spec.AllSources() {
			if source.RepositoryKey(src.RepoURL) == key {
				names = append(names, name)
				urls[src.RepoURL] = true
				break
			}
		}
	}
	r.mu.Unlock()
	// Once per spelling, not once per app: a monorepo of 10,000 apps is
	// one invalidation.
	for u := range urls {
		e.Invalidate(u)
	}
	for _, n := range names {
		r.queue.Add(n)
	}
}

// Invalidate forgets what the engine knows of a repository's branches and
// tags, so that the next refresh of its apps resolves them again (Argo
// CD's hard refresh; rendered manifests stay cached, by content). Hint
// does this for a running engine and also queues the apps.
func (e *Engine) Invalidate(repoURL string) {
	// The same URL may be a chart repository: its index is read again too.
	e.sources.Invalidate(repoURL)
}

// AppStatus returns the last status Run recorded for the app of key.
func (e *Engine) AppStatus(key v1alpha1.AppKey) (appstatus.Status, bool) {
	name := e.instanceName(key)
	e.mu.Lock()
	r := e.runner
	e.mu.Unlock()
	if r == nil {
		return appstatus.Status{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.apps[name]
	if !ok || !st.hasState || !r.ownsLocked(name) {
		return appstatus.Status{}, false
	}
	return st.status, true
}

// ManagedApps returns the keys of the apps Run manages, children included
// (with a Sharder, only those this replica owns), sorted by namespace and
// name.
func (e *Engine) ManagedApps() []v1alpha1.AppKey {
	e.mu.Lock()
	r := e.runner
	e.mu.Unlock()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]v1alpha1.AppKey, 0, len(r.apps))
	for n, st := range r.apps {
		if st.app != nil && r.ownsLocked(n) {
			out = append(out, v1alpha1.KeyOf(st.app))
		}
	}
	slices.SortFunc(out, v1alpha1.AppKey.Compare)
	return out
}
