package sync

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/hooks"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// pollUntil calls cond at once and then every interval until it reports
// true or an error, or ctx ends (apimachinery's poll, without the ctx
// argument the syncer's conditions do not need).
func pollUntil(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	return wait.PollUntilContextCancel(ctx, interval, true, func(context.Context) (bool, error) { return cond() })
}

func conditionTrue(obj *unstructured.Unstructured, condType string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == condType && m["status"] == "True" {
			return true
		}
	}
	return false
}

// waitGroup waits until every running task of the group is done: resources
// healthy, hooks complete, pruned objects gone. A Degraded resource or a
// failed hook fails at once; the wave timeout fails what is still running
// and says what it waited for. With final set and WaitFinalWave off, a
// group without hooks is done once written.
func (op *operation) waitGroup(ctx context.Context, g []*task, final bool) {
	var running []*task
	for _, t := range g {
		if t.state.Status == TaskRunning {
			running = append(running, t)
		}
	}
	if len(running) == 0 {
		return
	}
	if final && !op.s.opts.WaitFinalWave && !anyHook(running) {
		for _, t := range running {
			if !t.prune {
				op.set(t, TaskSucceeded, "", "")
			}
		}
	}
	op.yield()
	waveCtx, cancel := context.WithTimeout(ctx, op.s.opts.WaveTimeout)
	defer cancel()
	_ = pollUntil(waveCtx, op.s.opts.PollInterval, func() (bool, error) {
		if op.terminated() {
			return true, nil // stop waiting; the operation ends terminated
		}
		var still []*task
		for _, t := range running {
			if t.state.Status == TaskRunning {
				still = append(still, t)
			}
		}
		if len(still) == 0 {
			return true, nil
		}
		op.observeAll(waveCtx, still)
		for _, t := range still {
			if t.state.Status == TaskFailed {
				return true, nil // fail fast: the wave cannot succeed
			}
		}
		return false, nil
	})
	if ctx.Err() != nil {
		return // the operation was interrupted: stay Running, resumable
	}
	var waited []string
	for _, t := range running {
		if t.state.Status == TaskRunning && waveCtx.Err() != nil {
			waited = append(waited, fmt.Sprintf("%s (%s)", t.key, t.state.Message))
		}
	}
	if len(waited) == 0 {
		return
	}
	sort.Strings(waited)
	msg := fmt.Sprintf("timed out after %s waiting for %s", op.s.opts.WaveTimeout, strings.Join(waited, ", "))
	for _, t := range running {
		if t.state.Status == TaskRunning {
			op.set(t, TaskFailed, "", msg)
		}
	}
}

func anyHook(ts []*task) bool {
	for _, t := range ts {
		if t.hook {
			return true
		}
	}
	return false
}

// listThreshold is the number of objects of one kind in one namespace
// from which a sync lists them instead of getting each (byScope).
const listThreshold = 8

// scope is one kind in one namespace: what one List reads.
type scope struct {
	gvr schema.GroupVersionResource
	ns  string
}

// byScope splits tasks by how their live objects are read: the tasks of a
// scope that holds listThreshold or more of them with one List, the rest
// (singles) with a Get each. A sync of a few objects so costs a few reads
// however many objects of their kinds the namespace holds.
func byScope(tasks []*task) (listed map[scope][]*task, singles []*task) {
	all := map[scope][]*task{}
	for _, t := range tasks {
		sc := scope{t.gvr, t.key.Namespace}
		all[sc] = append(all[sc], t)
	}
	listed = map[scope][]*task{}
	for sc, ts := range all {
		if len(ts) < listThreshold {
			singles = append(singles, ts...)
		} else {
			listed[sc] = ts
		}
	}
	return listed, singles
}

// observeAll looks at every running task once: what the cluster cache
// holds and can be believed (cached), else objects of one kind and
// namespace that are many with one List, the rest with a Get each.
func (op *operation) observeAll(ctx context.Context, running []*task) {
	var read, singles []*task
	for _, t := range running {
		if live, ok := op.cached(t); ok {
			op.observeObject(ctx, t, live, nil)
			continue
		}
		if op.cacheMayShow(t) {
			continue // looked at again at the next poll
		}
		if t.hook || t.prune {
			singles = append(singles, t)
			continue
		}
		read = append(read, t)
	}
	listed, rest := byScope(read)
	singles = append(singles, rest...)
	for sc, ts := range listed {
		items, err := op.s.list(ctx, sc.gvr, sc.ns)
		if err != nil {
			if ctx.Err() != nil {
				return // the operation ended: its tasks keep what was last seen
			}
			for _, t := range ts {
				op.set(t, TaskRunning, "", "cannot read: "+err.Error())
			}
			continue
		}
		byName := make(map[string]*unstructured.Unstructured, len(items))
		for _, it := range items {
			byName[it.GetName()] = it
		}
		for _, t := range ts {
			live, ok := byName[t.key.Name]
			var err error
			if !ok {
				err = apierrors.NewNotFound(sc.gvr.GroupResource(), t.key.Name)
			}
			op.observeObject(ctx, t, live, err)
		}
	}
	parallel(op.s.opts.ApplyParallelism, singles, func(t *task) {
		live, err := op.s.resourceFor(t.gvr, t.key.Namespace).Get(ctx, t.key.Name, metav1.GetOptions{})
		op.observeObject(ctx, t, live, err)
	})
}

// cacheGrace is how long after writing an object a wait leaves it to a
// connected cluster cache (Collaborators.Live) to show it, before reading
// it from the API server. A watch shows a write within milliseconds, and
// an object just written is seldom healthy yet (a new Deployment has no
// available replica), so a read at once mostly cost the API server a
// request that said Progressing: 610 of them in a cold start of 1,000
// apps (BENCHMARKS.md, issue 37).
const cacheGrace = time.Second

// cacheMayShow reports whether t's object was written by this operation
// less than cacheGrace ago and a cluster cache is connected, so that the
// wait looks at the cache again before reading the API server.
func (op *operation) cacheMayShow(t *task) bool {
	if op.s.with.Live == nil || t.prune {
		return false
	}
	op.mu.Lock()
	written := t.written
	op.mu.Unlock()
	return !written.IsZero() && time.Since(written) < cacheGrace
}

// cached returns the task's object from Collaborators.Live when the cache's copy
// can be believed: the object pruned (same UID) while it is still there,
// else the object written (same UID) at or past the generation written.
// Anything else (no Live, not cached, another object of the name, a copy
// older than the write, a copy without the generation, as a cache that
// keeps only the metadata of some objects has) is read from the API
// server instead.
func (op *operation) cached(t *task) (*unstructured.Unstructured, bool) {
	if op.s.with.Live == nil {
		return nil, false
	}
	obj, ok := op.s.with.Live(t.key)
	if !ok || obj == nil {
		return nil, false
	}
	if t.prune {
		return obj, t.live != nil && obj.GetUID() == t.live.GetUID()
	}
	op.mu.Lock()
	uid, gen := t.state.UID, t.state.Generation
	op.mu.Unlock()
	if uid == "" || gen == 0 || obj.GetUID() != uid || obj.GetGeneration() < gen {
		return nil, false
	}
	return obj, true
}

// observeObject moves one running task on from what a read returned.
// Transient read errors leave it running: the wave timeout bounds them. A
// read that failed because the operation's context ended changes nothing:
// the task keeps the last state seen (a timeout then names "Progressing",
// not the interrupted read).
func (op *operation) observeObject(ctx context.Context, t *task, live *unstructured.Unstructured, err error) {
	if err != nil && ctx.Err() != nil {
		return
	}
	switch {
	case t.prune:
		if apierrors.IsNotFound(err) {
			op.set(t, TaskSucceeded, Pruned, "")
		} else if err == nil && live.GetUID() != t.live.GetUID() {
			op.set(t, TaskSucceeded, Pruned, "pruned (a new object of the same name exists)")
		}
		return
	case apierrors.IsNotFound(err):
		if t.hook {
			op.set(t, TaskFailed, "", "the hook was deleted before it completed")
		} else {
			op.set(t, TaskRunning, "", "the object is missing")
		}
		return
	case err != nil:
		op.set(t, TaskRunning, "", "cannot read: "+err.Error())
		return
	}
	if t.state.UID != "" && live.GetUID() != t.state.UID {
		if t.hook {
			op.set(t, TaskFailed, "", "the hook was replaced by another object of the same name")
			return
		}
		// Re-created by someone else: judge the new object from scratch.
		op.mu.Lock()
		t.state.UID, t.state.Generation = live.GetUID(), live.GetGeneration()
		op.mu.Unlock()
	}
	if t.hook {
		op.observeHook(ctx, t, live)
		return
	}
	st, herr := op.judge(ctx, live, t.state.Generation)
	op.setHealth(t, st)
	switch {
	case herr != nil:
		// A health check that fails (a Lua error, its instruction limit)
		// fails the object at once: waiting would only run into the
		// wave's timeout with the same error.
		op.set(t, TaskFailed, "", "health check failed: "+herr.Error())
	case st == nil || st.Code == health.Healthy:
		op.set(t, TaskSucceeded, "", messageOf(st))
	case st.Code == health.Degraded:
		op.set(t, TaskFailed, "", "Degraded: "+st.Message)
	default:
		op.set(t, TaskRunning, "", st.String())
	}
}

// judge returns the health of live, refusing to believe a status that has
// not yet observed the generation this sync applied: until then the object
// is Progressing whatever its status says. A health check that failed
// returns Unknown and its error (nil when the check was only cut short by
// ctx ending).
func (op *operation) judge(ctx context.Context, live *unstructured.Unstructured, applied int64) (*health.Status, error) {
	if observed, found, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration"); found && observed < applied {
		return &health.Status{Code: health.Progressing, Message: fmt.Sprintf("waiting for the controller to observe generation %d (at %d)", applied, observed)}, nil
	}
	if op.s.with.Health == nil {
		return nil, nil
	}
	st, err := health.CheckContext(ctx, op.s.with.Health, live)
	if err != nil {
		unknown := &health.Status{Code: health.Unknown, Message: err.Error()}
		if ctx.Err() != nil {
			return unknown, nil
		}
		return unknown, err
	}
	return st, nil
}

func messageOf(st *health.Status) string {
	if st == nil {
		return ""
	}
	return st.Message
}

var (
	gkJob = schema.GroupKind{Group: "batch", Kind: "Job"}
	gkPod = schema.GroupKind{Kind: "Pod"}
)

// observeHook decides whether a hook has completed: Jobs by their Complete
// and Failed conditions, Pods by their phase, anything else by its health
// (Healthy or no opinion succeeds, Degraded or Unknown fails). A completed
// hook loses its finalizer.
func (op *operation) observeHook(ctx context.Context, t *task, live *unstructured.Unstructured) {
	status, msg := TaskRunning, ""
	switch t.key.GroupKind() {
	case gkJob:
		switch {
		case conditionTrue(live, "Complete"):
			status = TaskSucceeded
		case conditionTrue(live, "Failed"):
			status, msg = TaskFailed, "Job failed: "+conditionMessage(live, "Failed")
		default:
			msg = "Job running"
		}
	case gkPod:
		phase, _, _ := unstructured.NestedString(live.Object, "status", "phase")
		switch phase {
		case "Succeeded":
			status = TaskSucceeded
		case "Failed":
			status, msg = TaskFailed, "Pod failed"
		default:
			msg = "Pod " + phase
		}
	default:
		st, _ := op.judge(ctx, live, t.state.Generation)
		switch {
		case st == nil || st.Code == health.Healthy:
			status = TaskSucceeded
		case st.Code == health.Degraded || st.Code == health.Unknown:
			status, msg = TaskFailed, st.String()
		default:
			msg = st.String()
		}
	}
	if status != TaskRunning {
		if err := op.s.removeFinalizer(ctx, t.gvr, live); err != nil {
			op.set(t, TaskRunning, "", err.Error()) // try again on the next look
			return
		}
	}
	op.set(t, status, "", msg)
}

func conditionMessage(obj *unstructured.Unstructured, condType string) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			reason, _ := m["reason"].(string)
			message, _ := m["message"].(string)
			return strings.TrimSpace(reason + " " + message)
		}
	}
	return ""
}

// removeFinalizer takes the hook finalizers (hooks.Finalizer and the legacy
// one) off obj, retrying on conflicts.
func (s *Syncer) removeFinalizer(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	rc := s.resourceFor(gvr, obj.GetNamespace())
	cur := obj
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var kept []string
		found := false
		for _, f := range cur.GetFinalizers() {
			if hooks.IsFinalizer(f) {
				found = true
				continue
			}
			kept = append(kept, f)
		}
		if !found {
			return nil
		}
		cur = cur.DeepCopy()
		cur.SetFinalizers(kept)
		_, err := rc.Update(ctx, cur, metav1.UpdateOptions{FieldManager: s.opts.FieldManager})
		if apierrors.IsConflict(err) {
			if fresh, gerr := rc.Get(ctx, obj.GetName(), metav1.GetOptions{}); gerr == nil {
				cur = fresh
			}
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// deleteHooks deletes the hooks selected by which (their delete policy and
// outcome), in the background so that a Job's Pods go with it.
func (op *operation) deleteHooks(ctx context.Context, which func(*task) bool) {
	var todo []*task
	for _, t := range op.tasks {
		if t.hook && t.mapped && which(t) {
			todo = append(todo, t)
		}
	}
	parallel(op.s.opts.ApplyParallelism, todo, func(t *task) {
		policy := metav1.DeletePropagationBackground
		rc := op.s.resourceFor(t.gvr, t.key.Namespace)
		if live, err := rc.Get(ctx, t.key.Name, metav1.GetOptions{}); err == nil {
			_ = op.s.removeFinalizer(ctx, t.gvr, live)
		}
		err := rc.Delete(ctx, t.key.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
		if err != nil && !apierrors.IsNotFound(err) {
			op.set(t, t.state.Status, "", "delete by policy: "+err.Error())
		}
	})
}

// setHealth records the health last judged for a task's object.
func (op *operation) setHealth(t *task, st *health.Status) {
	op.mu.Lock()
	defer op.mu.Unlock()
	t.state.Health = st
}
