package sync

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// task is one step of a plan: apply, run (a hook) or prune one object in one
// phase and wave.
type task struct {
	id       string
	key      resource.Key
	obj      *unstructured.Unstructured // desired, prepared (namespace, tracking); the live object for prunes
	live     *unstructured.Unstructured // live before the sync, or nil
	phase    hooks.Phase
	wave     int
	hook     bool
	hookInfo hooks.Info
	prune    bool
	opts     resource.Options
	gvr      schema.GroupVersionResource
	mapped   bool // gvr is known; false for kinds whose CRD this sync creates
	// namespaced is known even for unmapped kinds (from their CRD's scope).
	namespaced bool
	skipDryRun string // why the dry-run is skipped, or ""
	inSync     bool   // InSync found the live object already as desired
	// unread: live was not read because Collaborators.Absent said the object is
	// absent; the dry-run's answer (or readUnread before the write) tells.
	unread  bool
	refused string // why Collaborators.Admit refused this prune, or ""
	state   *TaskState
	// written is when this operation wrote the object (zero: not by this
	// run of the operation); see cacheGrace.
	written time.Time
}

func taskID(key resource.Key, phase hooks.Phase) string { return key.String() + ":" + string(phase) }

// PlanError collects every problem found while planning, each naming its
// object, so one sync attempt reports them all at once.
type PlanError struct {
	// Errors are the problems found, each naming its object.
	Errors []error
}

// Error implements error, joining every problem.
func (e *PlanError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, err := range e.Errors {
		msgs[i] = err.Error()
	}
	return "sync: cannot plan: " + strings.Join(msgs, "; ")
}

// Unwrap returns the individual errors.
func (e *PlanError) Unwrap() []error { return e.Errors }

// buildTasks turns the desired objects into tasks: hooks once per phase,
// skipped objects dropped, namespaces defaulted, tracking ids set.
func (s *Syncer) buildTasks(req Request, state *State) ([]*task, error) {
	var errs []error
	crds := CRDScopes(req.Desired)
	var only map[resource.Key]bool
	if len(req.Resources) > 0 {
		only = map[resource.Key]bool{}
		for _, k := range req.Resources {
			only[k] = true
		}
	}
	var tasks []*task
	for _, in := range req.Desired {
		obj := in.DeepCopy()
		info, err := hooks.Of(obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if info.Skip || (info.Hook && len(info.Phases) == 0) {
			continue
		}
		objOpts, err := resource.SyncOptionsOf(obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		t := &task{obj: obj, hook: info.Hook, hookInfo: info, wave: info.Wave, opts: req.Options.Merge(objOpts)}
		if err := s.resolveKind(t, crds, req.Namespace); err != nil {
			errs = append(errs, err)
			continue
		}
		if !t.hook {
			t.phase = hooks.Sync
			t.key = resource.KeyOf(obj)
			if only != nil && !only[t.key] {
				continue
			}
			if err := s.with.Tracking.Set(obj, req.App); err != nil {
				errs = append(errs, err)
				continue
			}
			t.id = taskID(t.key, t.phase)
			tasks = append(tasks, t)
			continue
		}
		if only != nil {
			continue // a partial sync runs no hooks
		}
		for _, phase := range info.Phases {
			if phase == hooks.PreDelete || phase == hooks.PostDelete {
				continue
			}
			ht := *t
			ht.phase = phase
			ht.obj = obj.DeepCopy()
			ht.obj.SetName(hooks.Name(obj, req.Revision, phase, state.StartedAt))
			ht.obj.SetGenerateName("")
			ht.key = resource.KeyOf(ht.obj)
			if err := s.with.Tracking.Set(ht.obj, req.App); err != nil {
				errs = append(errs, err)
				continue
			}
			ht.id = taskID(ht.key, phase)
			tasks = append(tasks, &ht)
		}
	}
	if len(errs) > 0 {
		return nil, &PlanError{Errors: errs}
	}
	if dup := duplicateKeys(tasks); dup != "" {
		return nil, &PlanError{Errors: []error{fmt.Errorf("%s: defined more than once in the desired state", dup)}}
	}
	return tasks, nil
}

// resolveKind finds the resource of the task's kind and settles its
// namespace: namespaced objects without one get the destination namespace,
// cluster-scoped objects lose any they name.
func (s *Syncer) resolveKind(t *task, crds map[schema.GroupKind]bool, destNS string) error {
	gvk := t.obj.GroupVersionKind()
	mapping, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		t.gvr, t.mapped = mapping.Resource, true
		t.namespaced = mapping.Scope.Name() == meta.RESTScopeNameNamespace
	case meta.IsNoMatchError(err):
		namespaced, from := Scope(gvk.GroupKind(), nil, crds)
		switch {
		case from == ScopeFromCRD:
			t.namespaced = namespaced
			t.skipDryRun = "its CustomResourceDefinition is created by this sync"
		case t.opts.Has(resource.OptionSkipDryRunOnMissingResource, "true"):
			t.namespaced = t.obj.GetNamespace() != "" || destNS != ""
			t.skipDryRun = "SkipDryRunOnMissingResource=true"
		default:
			return fmt.Errorf("%s: the cluster serves no %s (is its CustomResourceDefinition installed?)", resource.KeyOf(t.obj), gvk)
		}
	default:
		return fmt.Errorf("%s: %w", resource.KeyOf(t.obj), err)
	}
	return SettleNamespace(t.obj, t.namespaced, destNS)
}

func duplicateKeys(tasks []*task) string {
	seen := map[string]bool{}
	for _, t := range tasks {
		if seen[t.id] {
			return t.key.String()
		}
		seen[t.id] = true
	}
	return ""
}

// addPruneTasks adds a task for every live object of the app that is no
// longer desired. Their waves are mirrored (the highest wave is pruned
// first) and PruneLast puts a task after the last Sync wave.
func addPruneTasks(tasks []*task, managed []*unstructured.Unstructured, appOpts resource.Options) []*task {
	desired := map[resource.Key]bool{}
	for _, t := range tasks {
		desired[t.key] = true
		desired[resource.Key{Kind: t.key.Kind, Namespace: t.key.Namespace, Name: t.key.Name}] = true
	}
	var prunes []*task
	for _, live := range managed {
		key := resource.KeyOf(live)
		if desired[key] || desired[resource.Key{Kind: key.Kind, Namespace: key.Namespace, Name: key.Name}] {
			continue
		}
		if info, err := hooks.Of(live); err == nil && info.Hook {
			continue // hooks are deleted by their policies, never pruned
		}
		objOpts, _ := resource.SyncOptionsOf(live)
		wave, _ := hooks.Wave(live)
		prunes = append(prunes, &task{
			id: taskID(key, hooks.Sync) + ":prune", key: key, obj: live, live: live,
			phase: hooks.Sync, wave: wave, prune: true, opts: appOpts.Merge(objOpts),
			namespaced: live.GetNamespace() != "",
		})
	}
	mirrorWaves(prunes)
	last := 0
	for i, t := range tasks {
		if t.phase == hooks.Sync && (i == 0 || t.wave > last) {
			last = t.wave
		}
	}
	for _, p := range prunes {
		if p.opts.Has(resource.OptionPruneLast, "true") {
			p.wave = last + 1
		}
	}
	return append(tasks, prunes...)
}

// mirrorWaves swaps prune waves end for end: with waves {0, 1, 5} an object
// of wave 5 is pruned in wave 0 and one of wave 0 in wave 5, undoing an
// install in reverse.
func mirrorWaves(prunes []*task) {
	set := map[int]bool{}
	for _, p := range prunes {
		set[p.wave] = true
	}
	waves := make([]int, 0, len(set))
	for w := range set {
		waves = append(waves, w)
	}
	sort.Ints(waves)
	mirror := map[int]int{}
	for i, w := range waves {
		mirror[w] = waves[len(waves)-1-i]
	}
	for _, p := range prunes {
		p.wave = mirror[p.wave]
	}
}

// sortTasks orders tasks by phase, wave, kind and name, then moves each
// Namespace before the first task in it and each CRD before the first of its
// custom resources (taking their phase and wave when earlier).
func sortTasks(tasks []*task) {
	less := func(a, b *task) bool {
		if a.phase.Order() != b.phase.Order() {
			return a.phase.Order() < b.phase.Order()
		}
		if a.wave != b.wave {
			return a.wave < b.wave
		}
		ra, rb := kindRank(a.key.GroupKind()), kindRank(b.key.GroupKind())
		if ra != rb {
			return ra < rb
		}
		if a.key.Kind != b.key.Kind {
			return a.key.Kind < b.key.Kind
		}
		if a.key.Namespace != b.key.Namespace {
			return a.key.Namespace < b.key.Namespace
		}
		return a.key.Name < b.key.Name
	}
	sort.SliceStable(tasks, func(i, j int) bool { return less(tasks[i], tasks[j]) })
	moved := false
	for i, t := range tasks {
		if t.prune {
			continue
		}
		var uses func(*task) bool
		switch t.key.GroupKind() {
		case schema.GroupKind{Kind: "Namespace"}:
			uses = func(o *task) bool { return !o.prune && o.key.Namespace == t.key.Name }
		case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
			group, _, _ := unstructured.NestedString(t.obj.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(t.obj.Object, "spec", "names", "kind")
			gk := schema.GroupKind{Group: group, Kind: kind}
			uses = func(o *task) bool { return !o.prune && o.key.GroupKind() == gk }
		default:
			continue
		}
		for _, o := range tasks[:i] {
			if uses(o) {
				t.phase, t.wave, moved = o.phase, o.wave, true
				break
			}
		}
	}
	if moved {
		sort.SliceStable(tasks, func(i, j int) bool { return less(tasks[i], tasks[j]) })
	}
}

// groups cuts the sorted tasks into runs of one (phase, wave).
func groups(tasks []*task) [][]*task {
	var out [][]*task
	for i := 0; i < len(tasks); {
		j := i + 1
		for j < len(tasks) && tasks[j].phase == tasks[i].phase && tasks[j].wave == tasks[i].wave {
			j++
		}
		out = append(out, tasks[i:j])
		i = j
	}
	return out
}

// absent reports whether the task's live object is left unread on
// Collaborators.Absent's word: a server-side apply's dry-run will tell.
func (s *Syncer) absent(t *task) bool {
	return s.with.Absent != nil && !t.hook && s.useSSA(t) && !t.opts.Has(resource.OptionReplace, "true") && s.with.Absent(t.key)
}

// learnLive settles an unread task from its server-side dry-run's answer:
// an object the server would create comes back without a resourceVersion
// (it is absent); one that exists after all is read.
func (s *Syncer) learnLive(ctx context.Context, t *task, dryRunOut *unstructured.Unstructured) error {
	if !t.unread {
		return nil
	}
	if dryRunOut != nil && dryRunOut.GetResourceVersion() == "" {
		t.unread = false
		return nil
	}
	return s.readUnread(ctx, t)
}

// readUnread reads the live object of a task left unread (see absent).
func (s *Syncer) readUnread(ctx context.Context, t *task) error {
	if !t.unread {
		return nil
	}
	var obj *unstructured.Unstructured
	err := retryTransient(ctx, func() error {
		var err error
		obj, err = s.resourceFor(t.gvr, t.key.Namespace).Get(ctx, t.key.Name, metav1.GetOptions{})
		return err
	})
	switch {
	case err == nil:
		t.live = obj
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
	default:
		return fmt.Errorf("get %s: %w", t.key, err)
	}
	t.unread = false
	return nil
}

var errEmptyPrune = errors.New("refusing to prune: the desired state is empty (set AllowEmpty to delete every resource of the application)")

// liveState attaches the live object to each task, read as byScope says
// (a namespace shared by a hundred apps of a fleet made every sync list a
// hundred apps' objects when every scope was listed).
func (s *Syncer) liveState(ctx context.Context, tasks []*task) error {
	var want []*task
	for _, t := range tasks {
		if !t.mapped || t.prune {
			continue
		}
		if s.absent(t) {
			t.unread = true
			continue
		}
		want = append(want, t)
	}
	listed, singles := byScope(want)
	live := map[resource.Key]*unstructured.Unstructured{}
	for sc := range listed {
		items, err := s.list(ctx, sc.gvr, sc.ns)
		if apierrors.IsForbidden(err) {
			// An identity that may not list a kind (an impersonated
			// service account) may still be refused or allowed to write
			// each object: its dry-run says which, on the object's row.
			continue
		}
		if err != nil {
			return fmt.Errorf("list %s in %q: %w", sc.gvr, sc.ns, err)
		}
		for _, obj := range items {
			live[resource.KeyOf(obj)] = obj
		}
	}
	var mu gosync.Mutex
	var firstErr error
	parallel(s.opts.ApplyParallelism, singles, func(t *task) {
		var obj *unstructured.Unstructured
		err := retryTransient(ctx, func() error {
			var err error
			obj, err = s.resourceFor(t.gvr, t.key.Namespace).Get(ctx, t.key.Name, metav1.GetOptions{})
			return err
		})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			live[t.key] = obj
		case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
			// Absent, or not readable by this identity (see above).
		case firstErr == nil:
			firstErr = fmt.Errorf("get %s: %w", t.key, err)
		}
	})
	if firstErr != nil {
		return firstErr
	}
	for _, t := range tasks {
		if !t.prune {
			t.live = live[t.key]
		}
	}
	return nil
}
