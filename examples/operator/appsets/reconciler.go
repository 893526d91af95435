package appsets

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	appsetcontroller "github.com/kubegitops/gitops/appset/controller"
	"github.com/kubegitops/gitops/appset/scm"
	"github.com/kubegitops/gitops/appset/scm/all"
	"github.com/kubegitops/gitops/examples/operator/controller"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// AnnotationRefresh, set on an ApplicationSet (to any value), asks for a
// generation now with the branches of its git generators resolved again
// (Argo CD's annotation, which its webhooks set); the reconciler removes
// it.
const AnnotationRefresh = "argocd.argoproj.io/application-set-refresh"

// Finalizer is the reconciler's finalizer on a set whose Applications
// must be let go of in a particular way when the set is deleted (a policy
// without deletion, or preserveResourcesOnDeletion).
const Finalizer = "gitops.kubegitops.io/applicationset"

// Options configure a Reconciler. Start from DefaultOptions.
type Options struct {
	// Engine supplies what generators read: its sources, credentials and
	// resolve cache for git generators, its clusters for clusters
	// generators, its Application validation. Required.
	Engine *gitops.Engine
	// Generate are the generators' options; the fields left nil are
	// filled from Engine (appset/controller.GenerateOptions).
	Generate appset.Options
	// ControllerNamespace is where clusterDecisionResource generators read
	// their ConfigMap and resources. Default "argocd".
	ControllerNamespace string
	// Interval is how long after a generation a set is generated again
	// without other reason; a generator's requeueAfterSeconds shortens it.
	// Default 3 minutes.
	Interval time.Duration
	// MaxConcurrentReconciles bounds the sets reconciled at once.
	// Default 2.
	MaxConcurrentReconciles int
	// Log receives what the reconciler does.
	Log logr.Logger
	// Reader reads a set past the informer's cache when the cached copy
	// is not the version this reconciler last wrote or read (it may lag
	// behind the reconciler's own status writes).
	// Default: the manager's API reader (SetupWithManager), or the client
	// given to New when there is no manager.
	Reader client.Reader
	// Providers configure the scmProvider and pullRequest providers of
	// every forge (appset/scm/all), registered under Argo CD's keys unless
	// Generate names its own; Objects and ControllerNamespace left zero
	// are the reconciler's. Generate.SCM says which forges may be reached
	// (argocd-cmd-params-cm's applicationsetcontroller.enable.scm.providers
	// and allowed.scm.providers).
	Providers scm.Options
	// Settings are the ApplicationSet controller's own settings (Argo
	// CD's applicationsetcontroller.* of argocd-cmd-params-cm).
	Settings ControllerSettings
	// Projects, when set, are the AppProjects the generated Applications
	// must name, as in Argo CD: they are loaded into Engine before the
	// first generation, and every set is generated again when one
	// changes. An Application naming a project Engine does not have is
	// not written and the set reports it (ApplicationValidationError).
	// Nil: Engine's projects as the host gave them.
	Projects *controller.Projects
}

// DefaultOptions returns the defaults, without an engine. Their
// Generate.ControllerNamespace is empty: New makes it ControllerNamespace,
// so that plugin generators read their ConfigMap and token Secret in the
// namespace the reconciler serves, as Argo CD's read Argo CD's own.
func DefaultOptions() Options {
	gen := appset.DefaultOptions()
	gen.ControllerNamespace = ""
	return Options{Generate: gen, ControllerNamespace: "argocd", Interval: 3 * time.Minute,
		MaxConcurrentReconciles: 2, Log: logr.Discard(), Settings: ControllerSettings{ProgressiveSyncs: true}}
}

// Reconciler reconciles ApplicationSet custom resources into Application
// custom resources. It implements reconcile.Reconciler.
type Reconciler struct {
	client client.Client
	opts   Options
	runner *appset.Runner
	now    func() time.Time
	// versions holds, per set, the resourceVersion this reconciler last
	// wrote or read (controller.Current).
	versions controller.Versions
	// projectsLoaded is set once Options.Projects loaded.
	projectsLoaded atomic.Bool
}

// New returns a Reconciler that reads and writes sets and Applications
// through c, whose scheme must know v1alpha1 (v1alpha1.AddToScheme).
func New(c client.Client, opts Options) (*Reconciler, error) {
	if opts.Engine == nil {
		return nil, errors.New("appsets: no engine")
	}
	d := DefaultOptions()
	if opts.Interval <= 0 {
		opts.Interval = d.Interval
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = d.MaxConcurrentReconciles
	}
	if opts.ControllerNamespace == "" {
		opts.ControllerNamespace = d.ControllerNamespace
	}
	if opts.Log.GetSink() == nil {
		opts.Log = d.Log
	}
	if opts.Projects != nil && opts.Projects.Engine == nil {
		opts.Projects.Engine = opts.Engine
	}
	if opts.Settings.DryRun {
		c = dryRunClient{Client: c}
	}
	r := &Reconciler{client: c, opts: opts, now: time.Now}
	g := opts.Generate
	if g.Clusters == nil {
		// Every cluster Argo CD's generator sees: the declarative Secrets
		// of the namespace, read at each generation.
		g.Clusters = secretClusters{reader: c, namespace: opts.ControllerNamespace}
	}
	if g.InClusterEnabled == nil {
		g.InClusterEnabled = inClusterEnabled(c, opts.ControllerNamespace)
	}
	if g.Objects == nil {
		g.Objects = objects{r: r}
	}
	if g.ControllerNamespace == "" {
		g.ControllerNamespace = opts.ControllerNamespace
	}
	prov := opts.Providers
	if prov.Objects == nil {
		prov.Objects = g.Objects
	}
	if prov.ControllerNamespace == "" {
		prov.ControllerNamespace = opts.ControllerNamespace
	}
	all.Register(&g, prov)
	gen := appsetcontroller.GenerateOptions(opts.Engine, appsetcontroller.Options{Generate: g, ControllerNamespace: opts.ControllerNamespace})
	r.runner = appset.NewRunner(gen)
	return r, nil
}

// ownerIndex is the cache index of Applications by the name of the set
// that controls them.
const ownerIndex = ".metadata.controller.applicationset"

// SetupWithManager registers the reconciler with mgr: it watches sets
// (changes of spec, annotations, finalizers and deletion; not its own
// status writes) and the Applications they own (see appChanged). A set
// is read from the manager's cache, and afresh through its API reader
// when the cached copy is not the version this reconciler last wrote: a
// reconcile queued by an Application's change may start before the
// status the one before it wrote has come back through the watch, and a
// rollout judged against a stale status would wait forever for a sync
// that has already run.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	if r.opts.Reader == nil {
		r.opts.Reader = mgr.GetAPIReader()
	}
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Application{}, ownerIndex, func(o client.Object) []string {
		if ref := metav1.GetControllerOf(o); ref != nil && ref.APIVersion == v1alpha1.APIVersion && ref.Kind == v1alpha1.ApplicationSetKind {
			return []string{ref.Name}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("appsets: index Applications by owner: %w", err)
	}
	b := ctrl.ControllerManagedBy(mgr).
		Named("applicationset").
		For(&v1alpha1.ApplicationSet{}, ctrl.WithPredicates(predicate.And[client.Object](
			predicate.NewPredicateFuncs(func(o client.Object) bool { return r.serves(o.GetNamespace()) }),
			predicate.Or[client.Object](
				predicate.GenerationChangedPredicate{},
				predicate.AnnotationChangedPredicate{},
				lifecycleChanged(),
			)))).
		Owns(&v1alpha1.Application{}, ctrl.WithPredicates(appChanged())).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.clusterSetRequests), ctrl.WithPredicates(r.isClusterSecret())).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: r.opts.MaxConcurrentReconciles, RateLimiter: r.opts.Settings.RateLimiter})
	if p := r.opts.Projects; p != nil {
		if p.Reader == nil {
			p.Reader = mgr.GetCache()
		}
		b = b.WatchesRawSource(source.Kind[client.Object](mgr.GetCache(), controller.NewAppProject(), r.projectHandler()))
	}
	return b.Complete(r)
}

// Reconcile generates one set's Applications, writes them, advances its
// rollout and writes its status. It returns when to look again.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	set := &v1alpha1.ApplicationSet{}
	err := r.client.Get(ctx, req.NamespacedName, set)
	if err == nil {
		set, err = controller.Current(ctx, &r.versions, r.reader(), set)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.runner.Forget(req.Namespace, req.Name)
			r.versions.Forget(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if !r.serves(set.Namespace) {
		return reconcile.Result{}, nil // applicationsetcontroller.namespaces leaves it out
	}
	log := r.opts.Log.WithValues("applicationset", req.NamespacedName.String())
	if p := r.opts.Projects; p != nil && !r.projectsLoaded.Load() {
		if _, err := p.Load(ctx); err != nil {
			return reconcile.Result{}, err
		}
		r.projectsLoaded.Store(true)
	}
	if set.DeletionTimestamp != nil {
		return reconcile.Result{}, r.finalize(ctx, set)
	}
	if err := r.keepFinalizer(ctx, set); err != nil {
		return reconcile.Result{}, err
	}
	_, refresh := set.Annotations[AnnotationRefresh]
	if refresh {
		for _, repo := range appset.GitRepos(set.Spec.Generators) {
			r.opts.Engine.Apps().Invalidate(repo)
		}
	}
	res, genErr := r.runner.Generate(ctx, set)
	if genErr != nil {
		log.Info("generation failed", "error", genErr.Error())
	}
	out, err := r.apply(ctx, set, res, genErr)
	if err != nil {
		return reconcile.Result{}, err
	}
	var roll rolloutResult
	if r.rollingSync(set) {
		roll = r.rollout(ctx, set, out)
	}
	if err := r.writeStatus(ctx, set, out, roll, genErr); err != nil {
		return reconcile.Result{}, err
	}
	r.versions.Remember(set)
	if refresh {
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, AnnotationRefresh)
		if err := r.client.Patch(ctx, set, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, &Error{Set: keyOf(set), Err: fmt.Errorf("remove %s: %w", AnnotationRefresh, err)}
		}
		r.versions.Remember(set)
	}
	again := r.opts.Interval
	if d := appset.RequeueAfter(set.Spec.Generators); d > 0 && d < again {
		again = d
	}
	if (out.transient || roll.transient) && again > time.Second {
		// The cache lagged behind a write, or an Application is still
		// being deleted: look again soon.
		again = time.Second
	}
	return reconcile.Result{RequeueAfter: again}, nil
}

// reader is Options.Reader, or the client given to New.
func (r *Reconciler) reader() client.Reader {
	if r.opts.Reader != nil {
		return r.opts.Reader
	}
	return r.client
}

// rollingSync reports whether the set rolls out step by step.
func rollingSync(set *v1alpha1.ApplicationSet) bool {
	return set.Spec.Strategy != nil && set.Spec.Strategy.Type == "RollingSync" && set.Spec.Strategy.RollingSync != nil
}

// policy is what spec.syncPolicy lets the set do.
type policy struct {
	update, delete, preserve bool
}

func policyOf(set *v1alpha1.ApplicationSet) policy {
	p := v1alpha1.ApplicationsSyncSync
	var pol policy
	if sp := set.Spec.SyncPolicy; sp != nil {
		if sp.ApplicationsSync != nil && *sp.ApplicationsSync != "" {
			p = *sp.ApplicationsSync
		}
		pol.preserve = sp.PreserveResourcesOnDeletion
	}
	pol.update = p == v1alpha1.ApplicationsSyncSync || p == v1alpha1.ApplicationsSyncCreateUpdate
	pol.delete = p == v1alpha1.ApplicationsSyncSync || p == v1alpha1.ApplicationsSyncCreateDelete
	return pol
}

// ErrNotOwned is returned (wrapped in an *Error) when a set generates an
// Application whose name an existing Application has that the set does
// not control; that Application is left alone.
var ErrNotOwned = errors.New("an Application of this name exists and is not the set's")

// Error is a failure of one set's reconcile, naming the set
// ("namespace/name") and, when one is at fault, the Application.
type Error struct {
	Set string
	App string
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	s := "applicationset " + e.Set
	if e.App != "" {
		s += fmt.Sprintf(": application %q", e.App)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func keyOf(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }
