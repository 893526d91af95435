package sync

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	gosync "sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Syncer applies desired state to one cluster. It is safe for concurrent
// use by several operations (of different apps).
type Syncer struct {
	opts   Options
	with   Collaborators
	dyn    dynamic.Interface
	disco  discovery.CachedDiscoveryInterface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// New returns a Syncer that writes to the cluster of cfg, with the settings
// opts and the collaborators with.
func New(cfg *rest.Config, opts Options, with Collaborators) (*Syncer, error) {
	opts, with = opts.withDefaults(), with.withDefaults()
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = warningLogger{with.Log}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	cached := memory.NewMemCacheClient(dc)
	return &Syncer{
		opts:   opts,
		with:   with,
		dyn:    dyn,
		disco:  cached,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(cached),
	}, nil
}

// Sync runs one sync operation to its end, or until ctx ends or the
// operation's Timeout passes, and returns its result. The error is non-nil
// when the operation did not succeed; it then says why in one line, and the
// result holds the details per object.
//
// The order is Argo CD's: phases PreSync, Sync, PostSync; within a phase,
// waves from low to high; within a wave, prunes first, then hooks and
// resources in kind order (Namespaces, CRDs and ConfigMaps before the
// workloads that need them, webhook configurations last). Before anything
// is written every task is dry-run on the server and every failure is
// reported at once. After each wave the syncer waits until its resources
// are healthy (judged on a status that observed the applied generation) and
// its hooks complete; a Degraded resource, a failed hook or a wave timeout
// fails the operation, runs the SyncFail hooks and stops.
//
// A Running result (interrupted, or waiting for a prune confirmation) can be
// resumed by passing its State in a later Request.
func (s *Syncer) Sync(ctx context.Context, req Request) (Result, error) {
	state := newState(req)
	if s.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.Timeout)
		defer cancel()
	}
	op := &operation{s: s, req: req, state: state, tasks: nil}
	res, err := op.run(ctx)
	res.State = op.snapshot()
	res.State.Phase = res.Phase
	return res, err
}

func newState(req Request) *State {
	if req.State != nil {
		st := *req.State
		st.Tasks = make(map[string]TaskState, len(req.State.Tasks))
		for k, v := range req.State.Tasks {
			st.Tasks[k] = v
		}
		return &st
	}
	return &State{StartedAt: time.Now().UTC().Truncate(time.Second), Revision: req.Revision, Tasks: map[string]TaskState{}}
}

// operation is one run of Sync.
type operation struct {
	s       *Syncer
	req     Request
	state   *State
	tasks   []*task
	mu      gosync.Mutex // guards task states written by parallel workers
	pending []resource.Key
	// cpMu serialises Checkpoint calls, so each sees a newer state.
	cpMu gosync.Mutex
	// resume is what Request.Yield returned for the last wait, until the
	// next group's writes call it; nil when the operation holds its slot.
	resume func()
}

// yield gives the host's slot up for a wait (Request.Yield); the slot is
// taken again only when something more is written (resumeWrites), so an
// operation that ends after its last wave never queues for it.
func (op *operation) yield() {
	if op.req.Yield != nil && op.resume == nil {
		op.resume = op.req.Yield()
	}
}

// resumeWrites takes the host's slot back before writing.
func (op *operation) resumeWrites() {
	if op.resume != nil {
		r := op.resume
		op.resume = nil
		r()
	}
}

// checkpoint hands the current state to Request.Checkpoint.
func (op *operation) checkpoint() {
	if op.req.Checkpoint == nil {
		return
	}
	op.cpMu.Lock()
	defer op.cpMu.Unlock()
	st := op.snapshot()
	st.Phase = Running
	op.req.Checkpoint(st)
}

func (op *operation) snapshot() State {
	op.mu.Lock()
	defer op.mu.Unlock()
	st := *op.state
	st.Tasks = make(map[string]TaskState, len(op.tasks))
	for _, t := range op.tasks {
		st.Tasks[t.id] = *t.state
	}
	return st
}

func (op *operation) set(t *task, status TaskStatus, action Action, msg string) {
	op.mu.Lock()
	defer op.mu.Unlock()
	t.state.Status = status
	if action != "" {
		t.state.Action = action
	}
	t.state.Message = msg
}

func (op *operation) run(ctx context.Context) (Result, error) {
	s, req := op.s, op.req
	if err := resource.ValidateAppName(req.App); err != nil {
		return op.fail(Error, fmt.Errorf("sync: %w", err))
	}
	// A retry of an operation whose last attempt gave its slot up for a
	// wait takes one again: the host's Yield, then its resume.
	op.yield()
	op.resumeWrites()
	tasks, err := s.buildTasks(req, op.state)
	if err != nil {
		return op.fail(Error, err)
	}
	if err := s.liveState(ctx, tasks); err != nil {
		return op.fail(Error, fmt.Errorf("sync: read live state: %w", err))
	}
	// Extraneous objects are found even when pruning is off, so that the
	// result says what a prune would delete.
	managed, err := s.managed(ctx, req, tasks)
	if err != nil {
		return op.fail(Error, fmt.Errorf("sync: find the app's live objects: %w", err))
	}
	tasks = addPruneTasks(tasks, managed, req.Options)
	if err := op.admit(ctx, tasks); err != nil {
		return op.fail(Failed, err)
	}
	sortTasks(tasks)
	for _, t := range tasks {
		st, ok := op.state.Tasks[t.id]
		if !ok {
			st = TaskState{Status: TaskPending}
		}
		t.state = &st
	}
	op.tasks = tasks
	op.decidePrunes()
	if req.Prune && len(req.Desired) == 0 && !req.AllowEmpty && op.hasPrunes() {
		return op.fail(Failed, fmt.Errorf("sync: %w", errEmptyPrune))
	}
	if !req.DryRun {
		// The destination namespace is created before the dry run, so
		// that every object in it is validated by the server before any
		// is written (Argo CD does the same); a dry-run sync writes
		// nothing and skips their validation instead.
		if err := op.createNamespace(ctx); err != nil {
			return op.fail(Failed, err)
		}
	}
	op.markNamespaceDryRuns(ctx)
	op.markInSync(ctx)
	if err := op.keepIgnored(ctx); err != nil {
		return op.fail(Error, err)
	}
	if req.DryRun {
		return op.dryRun(ctx)
	}
	if !op.state.DryRunDone {
		if errs := op.dryRunAll(ctx); len(errs) > 0 {
			return op.fail(Failed, fmt.Errorf("sync: dry run failed, nothing was written: %w", errors.Join(errs...)))
		}
		op.state.DryRunDone = true
		op.checkpoint()
	}
	var main []*task
	for _, t := range tasks {
		if t.phase != hooks.SyncFail {
			main = append(main, t)
		}
	}
	gs := groups(main)
	for i, g := range gs {
		if err := ctx.Err(); err != nil {
			return op.interrupted(err)
		}
		if op.terminated() {
			return op.failSync(ctx, ErrTerminated)
		}
		if done(g) {
			continue
		}
		if failedTask(g) == nil {
			if pending := op.needsConfirmation(g); len(pending) > 0 {
				op.pending = pending
				return op.result(Running, fmt.Sprintf("waiting for confirmation to prune %d object(s)", len(pending))), nil
			}
			op.runGroup(ctx, g)
			if ctx.Err() == nil && failedTask(g) == nil && !op.terminated() {
				final := i == len(gs)-1
				op.waitGroup(ctx, g, final)
			}
		}
		if err := ctx.Err(); err != nil && failedTask(g) == nil {
			return op.interrupted(err)
		}
		op.progress(g, i == len(gs)-1)
		if failedTask(g) == nil && i < len(gs)-1 {
			op.checkpoint()
		}
		if t := failedTask(g); t != nil {
			return op.failSync(ctx, fmt.Errorf("%s: %s", t.key, t.state.Message))
		}
		if op.terminated() {
			return op.failSync(ctx, ErrTerminated)
		}
		if i < len(gs)-1 {
			op.delayWave(ctx)
		}
	}
	op.deleteHooks(ctx, func(t *task) bool {
		return t.state.Status == TaskSucceeded && t.hookInfo.HasDeletePolicy(hooks.HookSucceeded)
	})
	return op.result(Succeeded, "successfully synced"), nil
}

// admit asks Collaborators.Admit about every task. Refused objects to apply are
// gathered into one *PlanError; refused prunes are marked to be skipped.
func (op *operation) admit(ctx context.Context, tasks []*task) error {
	admit := op.s.with.Admit
	if op.req.Admit != nil {
		admit = op.req.Admit
	}
	if admit == nil {
		return nil
	}
	var errs []error
	for _, t := range tasks {
		err := admit(ctx, t.obj, t.namespaced, t.prune)
		if err == nil {
			continue
		}
		if t.prune {
			t.refused = err.Error()
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %w", t.key, err))
	}
	if len(errs) > 0 {
		return &PlanError{Errors: errs}
	}
	return nil
}

// ErrTerminated is the cause of an operation ended by Request.Terminate.
var ErrTerminated = errors.New("operation terminated")

// terminated reports whether Request.Terminate was closed.
func (op *operation) terminated() bool {
	if op.req.Terminate == nil {
		return false
	}
	select {
	case <-op.req.Terminate:
		return true
	default:
		return false
	}
}

func done(g []*task) bool {
	for _, t := range g {
		if t.state.Status == TaskPending || t.state.Status == TaskRunning {
			return false
		}
	}
	return true
}

func failedTask(g []*task) *task {
	for _, t := range g {
		if t.state.Status == TaskFailed {
			return t
		}
	}
	return nil
}

func (op *operation) hasPrunes() bool {
	for _, t := range op.tasks {
		if t.prune {
			return true
		}
	}
	return false
}

func (op *operation) progress(g []*task, final bool) {
	if op.s.opts.OnProgress == nil || len(g) == 0 {
		return
	}
	op.s.opts.OnProgress(Progress{App: op.req.App, Phase: string(g[0].phase), Wave: g[0].wave, Final: final, Results: op.results()})
}

// failSync runs the SyncFail hooks and deletes failed hooks marked
// HookFailed, then reports the operation failed.
func (op *operation) failSync(ctx context.Context, cause error) (Result, error) {
	var syncFail []*task
	for _, t := range op.tasks {
		if t.phase == hooks.SyncFail {
			syncFail = append(syncFail, t)
		}
	}
	op.state.FailureHandled = true
	if len(syncFail) > 0 && ctx.Err() == nil {
		for _, g := range groups(syncFail) {
			op.runGroup(ctx, g)
			op.waitGroup(ctx, g, false)
		}
	}
	op.deleteHooks(ctx, func(t *task) bool {
		return (t.state.Status == TaskFailed && t.hookInfo.HasDeletePolicy(hooks.HookFailed)) ||
			(t.state.Status == TaskSucceeded && t.phase == hooks.SyncFail && t.hookInfo.HasDeletePolicy(hooks.HookSucceeded))
	})
	return op.fail(Failed, fmt.Errorf("sync: %w", cause))
}

func (op *operation) interrupted(err error) (Result, error) {
	return op.result(Running, "interrupted: "+err.Error()), fmt.Errorf("sync: interrupted, resume with the returned state: %w", err)
}

func (op *operation) fail(phase OperationPhase, err error) (Result, error) {
	return op.result(phase, err.Error()), err
}

func (op *operation) result(phase OperationPhase, msg string) Result {
	return Result{Phase: phase, Message: msg, Results: op.results(), PendingConfirmation: op.pending}
}

func (op *operation) results() []ResourceResult {
	op.mu.Lock()
	defer op.mu.Unlock()
	out := make([]ResourceResult, 0, len(op.tasks))
	for _, t := range op.tasks {
		r := ResourceResult{Key: t.key, Phase: t.phase, Wave: t.wave, Hook: t.hook, Status: t.state.Status, Action: t.state.Action,
			Message: t.state.Message, Health: t.state.Health}
		if t.prune && r.Action == "" && r.Status == TaskSkipped {
			r.Action = Skipped
		}
		out = append(out, r)
	}
	return out
}

// Summary formats failed and pending rows of a result for an error message
// or a log line.
func (r Result) Summary() string {
	var lines []string
	for _, row := range r.Results {
		if row.Status == TaskFailed || row.Status == TaskRunning {
			lines = append(lines, fmt.Sprintf("%s (%s wave %d): %s", row.Key, row.Phase, row.Wave, row.Message))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}

// warningLogger sends the API server's warnings (deprecated kinds and the
// like) to the syncer's logger instead of the process-wide klog.
type warningLogger struct{ log logr.Logger }

// HandleWarningHeader implements rest.WarningHandler.
func (w warningLogger) HandleWarningHeader(code int, agent, text string) {
	w.log.V(1).Info("API server warning", "warning", text)
}
