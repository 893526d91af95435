package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/health"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppSetOptions configure RunAppSets. Start from DefaultAppSetOptions.
type AppSetOptions struct {
	// Generate are the generators' options. A nil Repos reads through
	// the engine's own sources (with Options.Credentials, so git
	// generators share the apps' resolve cache); a nil Validate checks
	// each generated Application with LoadApplications; a nil Clusters
	// offers the engine's clusters (Options.Clusters, without labels).
	Generate appset.Options
	// Interval is how often each set is generated again; 0: the engine's
	// Interval. A generator's requeueAfterSeconds shortens it for its
	// set; Engine.Hint of a repository a git generator reads generates at
	// once.
	Interval time.Duration
	// RolloutPoll is how often a RollingSync in progress, or a cascading
	// deletion, is looked at again. Default 500 ms.
	RolloutPoll time.Duration
	// ControllerNamespace is where clusterDecisionResource generators
	// read their ConfigMap and duck-typed resources (Argo CD's
	// namespace) when Generate.Decisions is nil: on the destination
	// https://kubernetes.default.svc. Default "argocd".
	ControllerNamespace string
}

// DefaultAppSetOptions returns appset.DefaultOptions and the engine's
// interval.
func DefaultAppSetOptions() AppSetOptions {
	return AppSetOptions{Generate: appset.DefaultOptions(), RolloutPoll: 500 * time.Millisecond, ControllerNamespace: "argocd"}
}

// AppSetStatus is the outcome of a set's last generation.
type AppSetStatus struct {
	// Applications are the names of the Applications the set owns.
	Applications []string
	// Err is the generation's or the rollout's failure (typed errors of
	// package appset, InvalidApplicationError, ...); nil when it went well.
	Err error
	// Step is the RollingSync step in progress (0-based); -1 when no step
	// waits (or the set has no RollingSync).
	Step int
	// Deleting are Applications whose objects are being deleted (their
	// resources-finalizer).
	Deleting []string
	// Reconciles counts the set's generations since RunAppSets started.
	Reconciles int64
}

// ResourcesFinalizer is Argo CD's finalizer on an Application that
// deletes its objects with it (foreground; "/background" and
// "/foreground" suffixes choose the propagation).
const ResourcesFinalizer = "resources-finalizer.argocd.argoproj.io"

// appSetLoop is the state of RunAppSets.
type appSetLoop struct {
	sets map[string]*setState // fixed once RunAppSets starts

	mu     gosync.Mutex
	owners map[string]string // app name -> the set that owns it
}

// claim makes set the owner of an app name unless another set owns it.
func (l *appSetLoop) claim(app, set string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o, ok := l.owners[app]; ok && o != set {
		return o, false
	}
	l.owners[app] = set
	return set, true
}

func (l *appSetLoop) release(app, set string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.owners[app] == set {
		delete(l.owners, app)
	}
}

// ErrAppOwned is returned (wrapped, in AppSetStatus.Err) when a set
// generates an Application of the name of one it does not own: another
// set's, or one the host gave Run. The Application is left alone.
var ErrAppOwned = errors.New("an Application of this name is not the set's")

type setState struct {
	key    string
	loop   *appSetLoop
	set    appset.ApplicationSet
	runner *appset.Runner
	hint   chan struct{}

	syncs gosync.WaitGroup // rollout syncs in flight

	mu       gosync.Mutex
	owned    map[string]*Application // as last upserted
	deleting map[string]*Application
	syncing  map[string]bool // RollingSync syncs in flight
	rolled   map[string]bool // synced by the rollout, not yet Healthy
	prune    map[string]bool // the template's automated prune, for rollout syncs
	status   AppSetStatus
}

// RunAppSets runs ApplicationSets against the running engine (Run must be
// running: ErrNotRunning otherwise) until ctx ends, and returns ctx's
// error. Each set is generated at once, every Interval and when Hint names
// a repository one of its git generators reads; the generated
// Applications are upserted into Run's app set and the set's policies
// apply:
//   - syncPolicy.applicationsSync: sync (default) creates, updates and
//     deletes; create-update never deletes; create-delete never updates;
//     create-only only creates;
//   - nothing is deleted after a generation that failed (appset's keep
//     last good output rule);
//   - an Application the set deletes is removed from Run; when it carries
//     the resources-finalizer its objects are deleted too (Engine.Delete,
//     until done), unless syncPolicy.preserveResourcesOnDeletion;
//   - strategy RollingSync: automated sync is taken off the generated
//     Applications; the set syncs the OutOfSync Applications of the first
//     step not yet Synced and Healthy, at most maxUpdate at a time, and
//     the next step starts only when every Application of that step is
//     Synced and Healthy. Applications no step selects are not synced.
func (e *Engine) RunAppSets(ctx context.Context, sets []appset.ApplicationSet, opts AppSetOptions) error {
	if e.running() == nil {
		return ErrNotRunning
	}
	opts = e.appSetDefaults(opts)
	loop := &appSetLoop{sets: map[string]*setState{}, owners: map[string]string{}}
	for _, s := range sets {
		key := s.Namespace + "/" + s.Name
		if _, dup := loop.sets[key]; dup {
			return fmt.Errorf("gitops: ApplicationSet %s given twice", key)
		}
		loop.sets[key] = &setState{key: key, loop: loop, set: s, runner: appset.NewRunner(opts.Generate), hint: make(chan struct{}, 1),
			owned: map[string]*Application{}, deleting: map[string]*Application{}, syncing: map[string]bool{}, rolled: map[string]bool{}, prune: map[string]bool{},
			status: AppSetStatus{Step: -1}}
	}
	e.mu.Lock()
	e.appsets = loop
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		if e.appsets == loop {
			e.appsets = nil
		}
		e.mu.Unlock()
	}()
	var wg gosync.WaitGroup
	for _, st := range loop.sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.runSet(ctx, st, opts)
		}()
	}
	wg.Wait()
	e.releaseSets(loop)
	return ctx.Err()
}

// releaseSets takes the Applications the sets generated out of Run when
// RunAppSets returns: nothing generates, updates or deletes them any more,
// so Run must not keep syncing them as if it did. Their objects stay in
// the cluster; a later RunAppSets with the same sets upserts them again
// (re-adopts them) on its first generation.
func (e *Engine) releaseSets(loop *appSetLoop) {
	for _, st := range loop.sets {
		st.mu.Lock()
		for name := range st.owned {
			if err := e.Remove(name); err != nil && !errors.Is(err, ErrNotRunning) {
				e.opts.Log.Info("applicationset stopped: app not removed from Run", "applicationset", st.set.Name, "app", name, "error", err.Error())
			}
			st.loop.release(name, st.key)
		}
		st.mu.Unlock()
	}
}

func (e *Engine) appSetDefaults(opts AppSetOptions) AppSetOptions {
	if opts.Interval <= 0 {
		opts.Interval = e.opts.Interval
	}
	if opts.Interval <= 0 {
		// The apps' periodic refreshes are off; sets still regenerate on
		// the default interval (and on hints).
		opts.Interval = DefaultOptions().Interval
	}
	if opts.RolloutPoll <= 0 {
		opts.RolloutPoll = 500 * time.Millisecond
	}
	if opts.ControllerNamespace == "" {
		opts.ControllerNamespace = "argocd"
	}
	opts.Generate = e.AppSetGenerateOptions(opts)
	return opts
}

// AppSetGenerateOptions returns opts.Generate with the fields left nil
// filled from the engine, as RunAppSets fills them, so that a host running
// appset.Runner itself (an operator writing Application resources) reads
// and checks as the engine does:
//   - Repos reads git generators' repositories through the engine's own
//     sources and Options.Credentials, sharing the resolve cache (and
//     Invalidate) of its apps;
//   - Validate checks each generated Application as LoadApplications does;
//   - Clusters offers Options.Clusters (names and servers, no labels);
//   - Decisions reads clusterDecisionResource resources in
//     opts.ControllerNamespace ("argocd" when empty) of the destination
//     https://kubernetes.default.svc, when Options.Clusters has it.
func (e *Engine) AppSetGenerateOptions(opts AppSetOptions) appset.Options {
	g := opts.Generate
	if g.Repos == nil {
		g.Repos = engineRepos{e}
	}
	if g.Validate == nil {
		g.Validate = validateGenerated
	}
	ns := opts.ControllerNamespace
	if ns == "" {
		ns = "argocd"
	}
	if g.Decisions == nil {
		for _, c := range e.opts.Clusters {
			if c.Server == v1alpha1.KubernetesInternalAPIServerAddr && c.Config != nil {
				if d, err := appset.NewClusterDecisions(c.Config, ns); err == nil {
					g.Decisions = d
				}
				break
			}
		}
	}
	if g.Clusters == nil {
		var cls appset.StaticClusters
		for _, c := range e.opts.Clusters {
			cls = append(cls, appset.Cluster{Name: c.Name, Server: c.Server})
		}
		g.Clusters = cls
	}
	return g
}

// validateGenerated checks a generated Application as LoadApplications
// checks a manifest.
func validateGenerated(obj map[string]any) error {
	js, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = LoadApplications(bytes.NewReader(js))
	return err
}

// AppSetStatus returns the last outcome of a set RunAppSets runs.
func (e *Engine) AppSetStatus(namespace, name string) (AppSetStatus, bool) {
	e.mu.Lock()
	loop := e.appsets
	e.mu.Unlock()
	if loop == nil {
		return AppSetStatus{}, false
	}
	st, ok := loop.sets[namespace+"/"+name]
	if !ok {
		return AppSetStatus{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.status
	s.Applications = slices.Clone(s.Applications)
	s.Deleting = slices.Clone(s.Deleting)
	return s, true
}

func (e *Engine) runSet(ctx context.Context, st *setState, opts AppSetOptions) {
	interval := opts.Interval
	if r := appset.RequeueAfter(st.set.Spec.Generators); r > 0 && r < interval {
		interval = r
	}
	for {
		busy := e.reconcileSet(ctx, st)
		wait := interval
		if busy {
			wait = opts.RolloutPoll
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			st.syncs.Wait()
			return
		case <-st.hint:
		case <-t.C:
		}
		t.Stop()
	}
}

// reconcileSet generates a set and applies its policies; true when a
// rollout or a deletion is in progress (look again soon).
func (e *Engine) reconcileSet(ctx context.Context, st *setState) bool {
	set := &st.set
	res, genErr := st.runner.Generate(ctx, set)
	if genErr != nil {
		e.opts.Log.Info("applicationset generation failed", "applicationset", set.Name, "error", genErr.Error())
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

	errs := []error{genErr}
	desired := map[string]*Application{}
	prunes := map[string]bool{}
	for _, u := range res.Applications {
		js, err := u.MarshalJSON()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		apps, err := LoadApplications(bytes.NewReader(js))
		if err != nil || len(apps) != 1 {
			errs = append(errs, fmt.Errorf("applicationset %q: application %q: %w", set.Name, u.GetName(), err))
			continue
		}
		a := apps[0]
		if rolling && a.Spec.SyncPolicy != nil && a.Spec.SyncPolicy.Automated != nil {
			prunes[e.AppKey(&a)] = a.Spec.SyncPolicy.Automated.Prune
			sp := *a.Spec.SyncPolicy
			sp.Automated = nil
			a.Spec.SyncPolicy = &sp
		}
		desired[e.AppKey(&a)] = &a
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	managed := map[string]bool{}
	for _, n := range e.ManagedApps() {
		managed[n] = true
	}
	for name, a := range desired {
		prev, ok := st.owned[name]
		if ok && !update {
			continue
		}
		if ok {
			out, changed, err := e.upsertOwned(ctx, set, a, prev)
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
		if !ok {
			if owner, mine := st.loop.claim(name, st.key); !mine || managed[name] {
				if mine {
					st.loop.release(name, st.key)
					owner = "Run's own apps"
				}
				errs = append(errs, fmt.Errorf("applicationset %q: application %q: %w (owned by %s)", set.Name, name, ErrAppOwned, owner))
				continue
			}
		}
		if err := e.Upsert(*a); err != nil {
			if !ok {
				st.loop.release(name, st.key)
			}
			errs = append(errs, fmt.Errorf("applicationset %q: application %q: %w", set.Name, name, err))
			continue
		}
		st.owned[name] = a
		st.prune[name] = prunes[name]
		delete(st.deleting, name)
	}
	if del {
		for name, a := range st.owned {
			if _, ok := desired[name]; ok {
				continue
			}
			if err := e.Remove(name); err != nil {
				errs = append(errs, err)
				continue
			}
			delete(st.owned, name)
			st.loop.release(name, st.key)
			delete(st.rolled, name)
			delete(st.prune, name)
			if !preserve && hasResourcesFinalizer(a) {
				st.deleting[name] = a
			}
		}
	}
	for name, a := range st.deleting {
		r, err := e.Delete(ctx, a, DeleteRequest{Propagation: finalizerPropagation(a)})
		if err != nil {
			errs = append(errs, fmt.Errorf("applicationset %q: %w", set.Name, err))
			continue
		}
		if r.Done() {
			delete(st.deleting, name)
		}
	}
	step := -1
	if rolling {
		var err error
		step, err = e.rollout(ctx, st)
		errs = append(errs, err)
	}
	st.status = AppSetStatus{Applications: sortedNames(st.owned), Err: errors.Join(errs...), Step: step,
		Deleting: sortedNames(st.deleting), Reconciles: st.status.Reconciles + 1}
	return len(st.deleting) > 0 || step >= 0
}

func sortedNames(m map[string]*Application) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func hasResourcesFinalizer(a *Application) bool {
	return slices.ContainsFunc(a.Finalizers, func(f string) bool {
		return f == ResourcesFinalizer || strings.HasPrefix(f, ResourcesFinalizer+"/")
	})
}

func finalizerPropagation(a *Application) metav1.DeletionPropagation {
	if slices.Contains(a.Finalizers, ResourcesFinalizer+"/background") {
		return metav1.DeletePropagationBackground
	}
	return metav1.DeletePropagationForeground
}

// done reports whether Run last saw an app Synced and Healthy.
func (e *Engine) appDone(name string) bool {
	s, ok := e.AppStatus(name)
	return ok && s.Sync == Synced && s.Health.Code == health.Healthy
}
