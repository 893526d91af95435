package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/engine"
)

// Status is the outcome of a set's last generation.
type Status struct {
	// Applications are the keys of the Applications the set owns, sorted
	// by namespace and name.
	Applications []v1alpha1.AppKey
	// Err is the generation's or the rollout's failure (typed errors of
	// package appset, engine.InvalidApplicationError, ErrAppOwned, ...);
	// nil when it went well.
	Err error
	// Step is the RollingSync step in progress (0-based); -1 when no step
	// waits (or the set has no RollingSync).
	Step int
	// Deleting are Applications whose objects are being deleted (their
	// resources-finalizer).
	Deleting []v1alpha1.AppKey
	// Reconciles counts the set's generations since Run started.
	Reconciles int64
}

// ResourcesFinalizer is Argo CD's finalizer on an Application that
// deletes its objects with it (foreground; "/background" and
// "/foreground" suffixes choose the propagation).
const ResourcesFinalizer = "resources-finalizer.argocd.argoproj.io"

// ErrAppOwned is returned (wrapped, in Status.Err) when a set generates
// an Application of the key of one it does not own: another set's, or
// one the engine's Run holds otherwise (given by the host, rendered by a
// parent app). The Application is left alone.
var ErrAppOwned = errors.New("an Application of this name is not the set's")

// ErrStarted is returned by Runner.Run when the Runner already ran.
var ErrStarted = errors.New("appset/controller: the Runner already ran")

// Runner runs ApplicationSets against a running engine: New, then Run;
// Status reads a set's outcome meanwhile and after.
type Runner struct {
	eng     *engine.Engine
	opts    Options
	sets    map[string]*setState // by namespace/name, fixed by New
	started atomic.Bool

	mu     gosync.Mutex
	owners map[string]string // app key -> the set that owns it
}

type setState struct {
	key    string
	r      *Runner
	set    appset.ApplicationSet
	runner *appset.Runner
	hint   chan struct{}

	syncs gosync.WaitGroup // rollout syncs in flight

	mu       gosync.Mutex
	owned    map[string]*engine.Application // as last upserted, by appKey
	deleting map[string]*engine.Application
	syncing  map[string]bool // RollingSync syncs in flight
	rolled   map[string]bool // synced by the rollout, not yet Healthy
	prune    map[string]bool // the template's automated prune, for rollout syncs
	status   Status
}

// New returns a Runner of sets on eng, with opts' zero fields filled
// (withDefaults: DefaultOptions, the engine's interval, log and
// GenerateOptions). It fails when two sets share a namespace and name.
func New(eng *engine.Engine, sets []appset.ApplicationSet, opts Options) (*Runner, error) {
	if eng == nil {
		return nil, errors.New("appset/controller: no engine")
	}
	opts = withDefaults(eng, opts)
	r := &Runner{eng: eng, opts: opts, sets: map[string]*setState{}, owners: map[string]string{}}
	for _, s := range sets {
		key := s.Namespace + "/" + s.Name
		if _, dup := r.sets[key]; dup {
			return nil, fmt.Errorf("appset/controller: ApplicationSet %s given twice", key)
		}
		r.sets[key] = &setState{key: key, r: r, set: s, runner: appset.NewRunner(opts.Generate), hint: make(chan struct{}, 1),
			owned: map[string]*engine.Application{}, deleting: map[string]*engine.Application{}, syncing: map[string]bool{},
			rolled: map[string]bool{}, prune: map[string]bool{}, status: Status{Step: -1}}
	}
	return r, nil
}

// Run is New and Runner.Run.
func Run(ctx context.Context, eng *engine.Engine, sets []appset.ApplicationSet, opts Options) error {
	r, err := New(eng, sets, opts)
	if err != nil {
		return err
	}
	return r.Run(ctx)
}

// Run runs the sets against the running engine (its Run must be running:
// engine.ErrNotRunning otherwise) until ctx ends, and returns ctx's error;
// a Runner runs once (ErrStarted). Each set is generated at once, every
// Interval and when Engine.Apps().Hint names a repository one of its git
// generators reads; the generated Applications are upserted into the
// engine's live set (Engine.Apps().CompareAndUpsert) and the set's policies
// apply:
//   - syncPolicy.applicationsSync: sync (default) creates, updates and
//     deletes; create-update never deletes; create-delete never updates;
//     create-only only creates;
//   - nothing is deleted after a generation that failed (appset's keep
//     last good output rule);
//   - an Application the set deletes is removed from the engine's Run;
//     when it carries the resources-finalizer its objects are deleted too
//     (Engine.Delete, until done), unless
//     syncPolicy.preserveResourcesOnDeletion;
//   - strategy RollingSync: automated sync is taken off the generated
//     Applications; the set syncs the OutOfSync Applications of the first
//     step not yet Synced and Healthy, at most maxUpdate at a time, and
//     the next step starts only when every Application of that step is
//     Synced and Healthy. Applications no step selects are not synced.
//
// When Run returns, the Applications the sets generated leave the
// engine's Run (their objects stay): a later Runner of the same sets
// adopts them again.
func (r *Runner) Run(ctx context.Context) error {
	if !r.eng.Apps().Running() {
		return engine.ErrNotRunning
	}
	if r.started.Swap(true) {
		return ErrStarted
	}
	stop := r.eng.Apps().OnHint(r.hint)
	defer stop()
	var wg gosync.WaitGroup
	for _, st := range r.sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runSet(ctx, st)
		}()
	}
	wg.Wait()
	r.releaseSets()
	return ctx.Err()
}

// Status returns the last outcome of the set namespace/name; false when
// the Runner was not given it.
func (r *Runner) Status(namespace, name string) (Status, bool) {
	st, ok := r.sets[namespace+"/"+name]
	if !ok {
		return Status{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.status
	s.Applications = slices.Clone(s.Applications)
	s.Deleting = slices.Clone(s.Deleting)
	return s, true
}

// claim makes set the owner of an app key unless another set owns it.
func (r *Runner) claim(app, set string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o, ok := r.owners[app]; ok && o != set {
		return o, false
	}
	r.owners[app] = set
	return set, true
}

func (r *Runner) release(app, set string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owners[app] == set {
		delete(r.owners, app)
	}
}

// releaseSets takes the Applications the sets generated out of the
// engine's Run when Run returns: nothing generates, updates or deletes
// them any more, so the engine must not keep syncing them as if it did.
// Their objects stay in the cluster; a later Runner with the same sets
// upserts them again (re-adopts them) on its first generation.
func (r *Runner) releaseSets() {
	for _, st := range r.sets {
		st.mu.Lock()
		for name, a := range st.owned {
			if err := r.eng.Apps().Remove(v1alpha1.KeyOf(a)); err != nil && !errors.Is(err, engine.ErrNotRunning) {
				r.opts.Log.Info("applicationset stopped: app not removed from Run", "applicationset", st.set.Name, "app", name, "error", err.Error())
			}
			r.release(name, st.key)
		}
		st.mu.Unlock()
	}
}

func (r *Runner) runSet(ctx context.Context, st *setState) {
	interval := r.opts.Interval
	if q := appset.RequeueAfter(st.set.Spec.Generators); q > 0 && q < interval {
		interval = q
	}
	for {
		busy := r.reconcileSet(ctx, st)
		wait := interval
		if busy {
			wait = r.opts.RolloutPoll
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
