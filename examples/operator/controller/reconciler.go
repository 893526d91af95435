package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/notify"
)

// AnnotationRefresh asks for a refresh now (Argo CD's annotation; "normal",
// or "hard" to resolve branches and tags again at once); the controller
// removes it once the refresh is done.
const AnnotationRefresh = "argocd.argoproj.io/refresh"

// Options configure a Reconciler. Start from DefaultOptions.
type Options struct {
	// Engine reconciles the apps. Required.
	Engine *gitops.Engine
	// Events, when set, queues an app as soon as an object it manages
	// changes (drift, health); without it changes are seen at the next
	// interval. Give the same value's NewClusterCache to the engine.
	Events *ClusterEvents
	// Interval is how long after a refresh an app is refreshed again
	// without other reason (with up to 10% jitter). Use the engine's
	// Interval. Default 3 minutes (zero). Negative turns periodic
	// refreshes off (Argo CD's timeout.reconciliation: 0): an app is then
	// refreshed when it changes, when an object it manages changes, when a
	// refresh is asked for, on retries, and every HardInterval.
	Interval time.Duration
	// HardInterval, when positive, gives each app a hard refresh
	// (branches and tags resolved again) once this long has passed since
	// its last one, or since this reconciler first saw it (Argo CD's
	// timeout.hard.reconciliation), also when periodic refreshes are off.
	HardInterval time.Duration
	// SelfHealTimeout is the least time between two self-heal syncs of
	// one app at one revision. Default autosync.SelfHealTimeout.
	SelfHealTimeout time.Duration
	// SelfHealBackoff, when set, is the self-heal backoff instead
	// (autosync.Backoff: Argo CD's controller.self.heal.backoff.*).
	SelfHealBackoff *autosync.Backoff
	// RepoErrorGracePeriod is Timing.RepoErrorGracePeriod. Default 0.
	RepoErrorGracePeriod time.Duration
	// MaxConcurrentReconciles bounds the apps reconciled at once (a sync
	// holds its worker until it ends). Default 4.
	MaxConcurrentReconciles int
	// Log receives what the reconciler does.
	Log logr.Logger
	// Reader reads Applications past the informer's cache, when the
	// cached copy is not the version this reconciler last wrote or read
	// (it may lag behind the reconciler's own writes).
	// Default: the manager's API reader (SetupWithManager), or the client
	// given to New when there is no manager.
	Reader client.Reader
	// Projects, when set, makes the AppProjects of its namespace the
	// engine's projects, loaded before the first reconcile and again on
	// every change, which requeues the apps of the changed project. Its
	// Reader defaults to the manager's cache (SetupWithManager). Nil: the
	// engine keeps the host's projects (gitops.Options.Projects).
	Projects *Projects
	// Sharder, when set, shares the Applications with other replicas
	// (package shard's Membership): this reconciler acts only on the apps
	// the Sharder gives it, named "namespace/name", writes
	// AnnotationOwner on them, and runs on every replica rather than only
	// the elected one. It needs Events (apps gained are queued through
	// it) and Identity.
	Sharder engine.Sharder
	// Identity is this replica's name, written in AnnotationOwner.
	Identity string
	// TreeWriteDelay is how long after an app's last status write a
	// change of its resource tree alone (status.resourceTree and
	// status.summary; sync, health, resources and operation unchanged)
	// waits before it is written: the Pods and ReplicaSets that appear
	// and turn Ready after a sync are then written together, or with the
	// app's next other change (its health turning Healthy), rather than
	// once each. An asked-for refresh writes at once. Default 10 seconds
	// (zero); negative writes every change at once.
	TreeWriteDelay time.Duration
}

// DefaultTreeWriteDelay is Options.TreeWriteDelay's default.
const DefaultTreeWriteDelay = 10 * time.Second

// DefaultOptions returns the defaults, without an engine.
func DefaultOptions() Options {
	return Options{Interval: 3 * time.Minute, SelfHealTimeout: autosync.SelfHealTimeout, MaxConcurrentReconciles: 4, TreeWriteDelay: DefaultTreeWriteDelay, Log: logr.Discard()}
}

// Reconciler reconciles Application custom resources with the engine. It
// implements reconcile.Reconciler.
type Reconciler struct {
	client client.Client
	opts   Options
	now    func() time.Time
	// resumeChecked holds the apps whose interrupted operation, if any,
	// was resumed before their first refresh in this process.
	resumeChecked gosync.Map
	// terminate holds the apps whose termination was asked for before
	// their operation was registered in the engine.
	terminate gosync.Map
	// versions holds, per app, the resourceVersion this reconciler last
	// wrote or read itself (see current).
	versions Versions
	// projectsLoaded is set once Options.Projects loaded; the project
	// watch keeps them current after that.
	projectsLoaded atomic.Bool
	// lastHard holds, per app, when its last hard refresh was (or when
	// it was first seen), for Options.HardInterval.
	lastHard gosync.Map
	// shards is which apps this replica owns under Options.Sharder.
	shards ownership
	// timing holds the intervals and self-heal backoff in force: Options',
	// then SetTiming's.
	timing atomic.Pointer[Timing]
	// repoErrors holds, per app, when its render first failed
	// (Timing.RepoErrorGracePeriod).
	repoErrors gosync.Map
}

// New returns a Reconciler that reads and writes Applications through c.
func New(c client.Client, opts Options) (*Reconciler, error) {
	if opts.Engine == nil {
		return nil, errors.New("controller: no engine")
	}
	d := DefaultOptions()
	if opts.Interval == 0 {
		opts.Interval = d.Interval
	}
	if opts.SelfHealTimeout <= 0 {
		opts.SelfHealTimeout = d.SelfHealTimeout
	}
	if opts.TreeWriteDelay == 0 {
		opts.TreeWriteDelay = d.TreeWriteDelay
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = d.MaxConcurrentReconciles
	}
	if opts.Log.GetSink() == nil {
		opts.Log = d.Log
	}
	if opts.Sharder != nil && (opts.Events == nil || opts.Identity == "") {
		return nil, errors.New("controller: a Sharder needs Events and Identity")
	}
	if opts.Projects != nil && opts.Projects.Engine == nil {
		opts.Projects.Engine = opts.Engine
	}
	r := &Reconciler{client: c, opts: opts, now: time.Now}
	r.SetTiming(Timing{Interval: opts.Interval, HardInterval: opts.HardInterval, SelfHealTimeout: opts.SelfHealTimeout,
		SelfHealBackoff: opts.SelfHealBackoff, RepoErrorGracePeriod: opts.RepoErrorGracePeriod})
	return r, nil
}

// SetupWithManager registers the reconciler with mgr. Updates that change
// neither generation (spec or operation), annotations, finalizers nor the
// deletion timestamp are filtered out, so the controller's own status
// writes never make it reconcile again; nor do its own removal of the
// refresh annotation and the notified annotation the notifications
// controller writes (annotationsChanged). Applications are read from the
// manager's cache, and afresh through its API reader (Options.Reader)
// when the cached copy is not the version last seen.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	if r.opts.Reader == nil {
		r.opts.Reader = mgr.GetAPIReader()
	}
	var needLeader *bool
	if r.opts.Sharder != nil {
		// Every replica reconciles its share, not only the elected one.
		needLeader = new(bool)
		if err := r.followShards(mgr); err != nil {
			return err
		}
	}
	b := ctrl.ControllerManagedBy(mgr).
		Named("application").
		For(&v1alpha1.Application{}, ctrl.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{},
			annotationsChanged(),
			lifecycleChanged(),
			r.terminationRequested(),
		))).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: r.opts.MaxConcurrentReconciles,
			NeedLeaderElection:      needLeader,
			// A failing app backs off exponentially, but never beyond one
			// interval, as the engine's own run loop does.
			RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
				workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, r.backoffCap()),
				&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
			),
		})
	if r.opts.Events != nil {
		b = b.WatchesRawSource(r.opts.Events.source())
	}
	if p := r.opts.Projects; p != nil {
		if p.Reader == nil {
			p.Reader = mgr.GetCache()
		}
		b = b.WatchesRawSource(source.Kind[client.Object](mgr.GetCache(), NewAppProject(), r.projectHandler()))
	}
	return b.Complete(r)
}

// annotationsChanged passes updates that change the annotations, except
// those that only write the notifications controller's
// notified.notifications.argoproj.io or remove the refresh annotation
// (what the reconciler does itself after a refresh): neither changes what
// a reconcile reads, so each would only refresh the app once more.
func annotationsChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return false
		}
		prev, next := maps.Clone(e.ObjectOld.GetAnnotations()), maps.Clone(e.ObjectNew.GetAnnotations())
		for _, own := range []string{notify.NotifiedAnnotation, AnnotationOwner} {
			delete(prev, own)
			delete(next, own)
		}
		if _, ok := next[AnnotationRefresh]; !ok {
			delete(prev, AnnotationRefresh)
		}
		return !maps.Equal(prev, next)
	}}
}

// lifecycleChanged passes updates that start a deletion or change the
// finalizers.
func lifecycleChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return false
		}
		if (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil) {
			return true
		}
		return fmt.Sprint(e.ObjectOld.GetFinalizers()) != fmt.Sprint(e.ObjectNew.GetFinalizers())
	}}
}

// Reconcile brings one Application up to date: a deletion runs the
// finalizers; a requested operation runs once; otherwise the app is
// refreshed, synced when its automated policy says so, and its status
// written when it changed. It returns when to look again.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if !r.owns(req.NamespacedName) {
		return reconcile.Result{}, nil // another replica's; resharding queues it here when it moves
	}
	cached := &v1alpha1.Application{}
	err := r.client.Get(ctx, req.NamespacedName, cached)
	var app *v1alpha1.Application
	if err == nil {
		app, err = r.current(ctx, cached)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	log := r.opts.Log.WithValues("app", req.NamespacedName.String())
	if skipReconcile(app) {
		log.V(1).Info("skipping the Application: argocd.argoproj.io/skip-reconcile is true")
		return reconcile.Result{}, nil
	}
	if err := r.claim(ctx, app); err != nil {
		return reconcile.Result{}, err
	}
	if p := r.opts.Projects; p != nil && !r.projectsLoaded.Load() {
		if _, err := p.Load(ctx); err != nil {
			return reconcile.Result{}, err
		}
		r.projectsLoaded.Store(true)
	}
	if app.DeletionTimestamp != nil {
		return r.finalize(ctx, app, log)
	}
	if err := app.Validate(); err != nil {
		// A spec the engine refuses waits for the next spec change.
		return reconcile.Result{}, r.writeStatus(ctx, app, invalidSpec(app.Status, err, r.now()))
	}
	op := app.Operation
	if _, seen := r.resumeChecked.LoadOrStore(nameOf(app), true); !seen {
		if res, resumed, err := r.resume(ctx, app, log); resumed || err != nil {
			return res, err
		}
	}
	if op != nil {
		return r.runOperation(ctx, app, *op, log)
	}
	if s := app.Status.OperationState; s != nil && s.Phase == PhaseTerminating {
		// An automated sync asked to terminate with none running here.
		if err := r.writeStatus(ctx, app, r.terminated(app.Status)); err != nil {
			return reconcile.Result{}, err
		}
	}
	return r.refresh(ctx, app, log)
}

// invalidSpec is prev for an app whose spec the engine refuses (err, from
// Validate, names each field): Unknown, with nothing compared, and the
// refusal as an InvalidSpecError condition.
func invalidSpec(prev v1alpha1.ApplicationStatus, err error, now time.Time) v1alpha1.ApplicationStatus {
	next := prev
	next.Sync = v1alpha1.SyncStatus{Status: string(appstatus.Unknown)}
	next.Health = v1alpha1.HealthStatus{Status: "Unknown"}
	next.Resources, next.ResourceTree, next.Summary = nil, nil, v1alpha1.ApplicationSummary{}
	next.Conditions = appstatus.Conditions(prev.Conditions, []appstatus.Condition{{Type: appstatus.ConditionInvalidSpec, Message: err.Error(), Err: err}}, now)
	return next
}

// refresh compares the app with Git and the cluster, syncs it when its
// automated policy says so, and writes the status with the app's resource
// tree and summary.
func (r *Reconciler) refresh(ctx context.Context, app *v1alpha1.Application, log logr.Logger) (reconcile.Result, error) {
	hardDue := r.hardDue(app)
	hard := app.Annotations[AnnotationRefresh] == "hard" || hardDue
	if hard {
		// Resolve branches and tags again now rather than from the
		// engine's short-lived cache (rendered output stays cached by
		// content).
		for _, src := range app.Spec.AllSources() {
			r.opts.Engine.Apps().Invalidate(src.RepoURL)
		}
	}
	prev := app.Status
	st, refreshErr := r.opts.Engine.Refresh(ctx, app)
	if r.inRepoErrorGrace(app, st, refreshErr, hard) {
		log.V(1).Info("render failed within the repo error grace period: the status stays as it was", "error", refreshErr.Error())
		if err := r.doneRefresh(ctx, app); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, refreshErr
	}
	sources := len(app.Spec.AllSources())
	next := keepLastGood(prev, appstatus.Refreshed(prev, st, sources, r.now()), st, refreshErr)
	again := r.next(app)
	if refreshErr == nil {
		if tree, summary, err := r.opts.Engine.ResourceTree(ctx, app); err == nil {
			next.ResourceTree, next.Summary = tree, summary
		} else {
			log.V(1).Info("resource tree not read: the last one stays", "error", err.Error())
		}
		var wait time.Duration
		var ran bool
		var err error
		next, wait, ran, err = r.autoSync(ctx, app, st, next, log)
		if err != nil {
			return reconcile.Result{}, err
		}
		if ran {
			next = r.settled(ctx, app, prev, next, log)
		}
		if ran || wait > 0 {
			// The sync changed things (or self-heal must wait): look again
			// soon, in case the status written here still shows the
			// refresh before it.
			again = time.Second
			if wait > 0 {
				again = wait
			}
		}
	} else if next.Resources == nil {
		// Nothing was compared: nothing of the tree is known either.
		next.ResourceTree, next.Summary = nil, v1alpha1.ApplicationSummary{}
	}
	if wait := r.treeWait(app, prev, next); wait > 0 {
		log.V(1).Info("only the resource tree changed: written with the next change, or in a moment", "after", wait.String())
		if again > 0 && again < wait {
			wait = again
		}
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	if err := r.writeStatus(ctx, app, next); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.doneRefresh(ctx, app); err != nil {
		return reconcile.Result{}, err
	}
	if refreshErr != nil {
		// The controller's rate limiter brings the app back with
		// exponential backoff, not after a whole interval.
		log.V(1).Info("refresh failed", "error", refreshErr.Error())
		return reconcile.Result{}, refreshErr
	}
	return reconcile.Result{RequeueAfter: again}, nil
}

// doneRefresh removes the refresh annotation, when the app has one: the
// refresh it asked for is done.
func (r *Reconciler) doneRefresh(ctx context.Context, app *v1alpha1.Application) error {
	if _, ok := app.Annotations[AnnotationRefresh]; !ok {
		return nil
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, AnnotationRefresh))
	if err := r.client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("application %s: remove refresh annotation: %w", nameOf(app), err)
	}
	r.remember(app)
	return nil
}

func nameOf(app *v1alpha1.Application) string { return app.Namespace + "/" + app.Name }

func (r *Reconciler) jitter() time.Duration {
	iv := r.times().Interval
	return iv + time.Duration(rand.Int64N(int64(iv)/10+1))
}

// next is when app is refreshed again without other reason: after the
// interval with jitter, or at its next hard refresh if that comes first;
// zero (never) when periodic refreshes are off and there is no
// HardInterval.
func (r *Reconciler) next(app *v1alpha1.Application) time.Duration {
	var again time.Duration
	if r.times().Interval > 0 {
		again = r.jitter()
	}
	if hard := r.times().HardInterval; hard > 0 {
		at := r.now()
		if v, ok := r.lastHard.Load(nameOf(app)); ok {
			at = v.(time.Time)
		}
		wait := max(at.Add(hard).Sub(r.now()), time.Second)
		if again == 0 || wait < again {
			again = wait
		}
	}
	return again
}

// hardDue reports whether app's hard refresh is due (HardInterval since
// the last one), recording it as done now when it is; an app seen first
// starts its count now.
func (r *Reconciler) hardDue(app *v1alpha1.Application) bool {
	hard := r.times().HardInterval
	if hard <= 0 {
		return false
	}
	now := r.now()
	v, seen := r.lastHard.LoadOrStore(nameOf(app), now)
	if seen && now.Sub(v.(time.Time)) >= hard {
		r.lastHard.Store(nameOf(app), now)
		return true
	}
	return false
}

// backoffCap is the longest a failing app waits for its retry: one
// interval, or the default interval when periodic refreshes are off.
func (r *Reconciler) backoffCap() time.Duration {
	if r.opts.Interval > 0 {
		return r.opts.Interval
	}
	return DefaultOptions().Interval
}
