package sync

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	gvrNamespace = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gkCRD        = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
)

// parallel runs fn over tasks with at most n at a time.
func parallel(n int, tasks []*task, fn func(*task)) {
	sem := make(chan struct{}, n)
	var wg gosync.WaitGroup
	for _, t := range tasks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(t)
		}()
	}
	wg.Wait()
}

// runGroup does the writes of one (phase, wave): prunes first, then hooks
// and resources in runs of one kind at a time (each run in parallel), so
// that within a wave a Namespace or CRD is in place before what needs it.
func (op *operation) runGroup(ctx context.Context, g []*task) {
	op.resumeWrites()
	var prunes, writes []*task
	for _, t := range g {
		if t.state.Status != TaskPending {
			continue
		}
		if t.prune {
			prunes = append(prunes, t)
		} else {
			writes = append(writes, t)
		}
	}
	parallel(op.s.opts.ApplyParallelism, prunes, func(t *task) { op.prune(ctx, t) })
	for i := 0; i < len(writes); {
		j := i + 1
		for j < len(writes) && writes[j].key.GroupKind() == writes[i].key.GroupKind() {
			j++
		}
		batch := writes[i:j]
		parallel(op.s.opts.ApplyParallelism, batch, func(t *task) { op.write(ctx, t) })
		if batch[0].key.GroupKind() == gkCRD {
			op.afterCRDs(ctx, batch)
		}
		i = j
	}
}

// write applies a resource or creates a hook.
func (op *operation) write(ctx context.Context, t *task) {
	if !t.mapped {
		if err := op.s.remap(ctx, t); err != nil {
			op.failTask(ctx, t, err.Error())
			return
		}
	}
	if t.hook {
		if err := op.prepareHook(ctx, t); err != nil {
			op.failTask(ctx, t, err.Error())
			return
		}
		// Remember that the create is sent: if its answer is lost and the
		// operation is resumed, the hook found under this name is the one
		// this operation created, to adopt rather than delete and create
		// again (which would run it twice).
		op.mu.Lock()
		t.state.Name = t.obj.GetName()
		op.mu.Unlock()
		op.checkpoint()
		out, action, err := op.s.create(ctx, t, false)
		if err != nil {
			op.failTask(ctx, t, fmt.Sprintf("create hook: %v", err))
			return
		}
		op.recordWrite(ctx, t, out, action)
		return
	}
	if t.inSync {
		op.recordWrite(ctx, t, t.live, Unchanged)
		return
	}
	// A task left unread whose dry-run did not settle it (skipped, or
	// done by an earlier attempt of a resumed operation) is read now.
	if err := op.s.readUnread(ctx, t); err != nil {
		op.failTask(ctx, t, err.Error())
		return
	}
	out, action, err := op.s.apply(ctx, t, false)
	if fields, ok := immutableFields(err, t.key.GroupKind(), t.obj, t.live); ok {
		if t.opts.Has(resource.OptionForce, "true") || op.s.opts.RecreateOnImmutable {
			out, err = op.recreate(ctx, t)
			action = Recreated
		} else {
			err = &ImmutableFieldError{Key: t.key, Fields: fields, Err: err}
		}
	}
	if err != nil {
		op.failTask(ctx, t, err.Error())
		return
	}
	op.recordWrite(ctx, t, out, action)
}

// failTask marks a task Failed, unless the operation's context ended: a
// write cut short by a cancellation or a timeout did not fail, it was
// interrupted, so the task stays Pending and the operation ends Running, to
// be resumed from its State (the write is applied again; server-side apply
// is idempotent, and a hook already created is adopted by name).
func (op *operation) failTask(ctx context.Context, t *task, msg string) {
	if ctx.Err() != nil {
		op.set(t, TaskPending, "", "")
		return
	}
	op.set(t, TaskFailed, "", msg)
}

// recordWrite notes what a write returned. A resource that is healthy (or
// of a kind without health) in the very object the server returned is done
// at once; only the others are polled.
func (op *operation) recordWrite(ctx context.Context, t *task, out *unstructured.Unstructured, action Action) {
	op.mu.Lock()
	t.state.UID = out.GetUID()
	t.state.Generation = out.GetGeneration()
	t.state.Name = out.GetName()
	t.written = time.Now()
	op.mu.Unlock()
	status, msg := TaskRunning, ""
	if !t.hook {
		st, herr := op.judge(ctx, out, out.GetGeneration())
		op.setHealth(t, st)
		switch {
		case herr != nil:
			status, msg = TaskFailed, "health check failed: "+herr.Error()
		case st == nil || st.Code == health.Healthy:
			status, msg = TaskSucceeded, messageOf(st)
		}
	}
	op.set(t, status, action, msg)
	op.s.with.Log.V(1).Info("wrote", "object", t.key.String(), "action", string(action), "phase", string(t.phase), "wave", t.wave)
}

// recreate deletes the object, waits until it is gone and creates it again.
func (op *operation) recreate(ctx context.Context, t *task) (*unstructured.Unstructured, error) {
	rc := op.s.resourceFor(t.gvr, t.key.Namespace)
	policy := metav1.DeletePropagationForeground
	err := retryTransient(ctx, func() error {
		err := rc.Delete(ctx, t.key.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: delete before re-create: %w", t.key, err)
	}
	if err := op.waitGone(ctx, t); err != nil {
		return nil, err
	}
	t.live = nil
	out, _, err := op.s.apply(ctx, t, false)
	if err != nil {
		return nil, fmt.Errorf("%s: re-create: %w", t.key, err)
	}
	return out, nil
}

// waitGone waits until the task's object no longer exists.
func (op *operation) waitGone(ctx context.Context, t *task) error {
	ctx, cancel := context.WithTimeout(ctx, op.s.opts.WaveTimeout)
	defer cancel()
	err := pollUntil(ctx, op.s.opts.PollInterval, func() (bool, error) {
		_, err := op.s.resourceFor(t.gvr, t.key.Namespace).Get(ctx, t.key.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("%s: waiting for deletion: %w", t.key, err)
	}
	return nil
}

// afterCRDs waits until the CRDs just applied are Established and refreshes
// the REST mapper, so that their custom resources can be applied next.
func (op *operation) afterCRDs(ctx context.Context, crds []*task) {
	waveCtx, cancel := context.WithTimeout(ctx, op.s.opts.WaveTimeout)
	defer cancel()
	for _, t := range crds {
		if t.state.Status == TaskFailed {
			continue
		}
		err := pollUntil(waveCtx, op.s.opts.PollInterval, func() (bool, error) {
			obj, err := op.s.resourceFor(t.gvr, "").Get(waveCtx, t.key.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			return conditionTrue(obj, "Established"), nil
		})
		if err != nil {
			// The operation's own end is an interruption; the wave
			// timeout is a failure.
			op.failTask(ctx, t, fmt.Sprintf("CustomResourceDefinition not Established: %v", err))
		}
	}
	op.s.mapper.Reset()
}

// remap resolves a kind that was unknown at planning (its CRD came with the
// sync). Discovery may lag the CRD's Established condition by a moment, so
// it asks again, with a fresh mapper, until the wave timeout.
func (s *Syncer) remap(ctx context.Context, t *task) error {
	gvk := t.obj.GroupVersionKind()
	ctx, cancel := context.WithTimeout(ctx, s.opts.WaveTimeout)
	defer cancel()
	var last error
	err := pollUntil(ctx, s.opts.PollInterval, func() (bool, error) {
		m, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			last = err
			s.mapper.Reset()
			return false, nil
		}
		t.gvr, t.mapped = m.Resource, true
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("kind %s still unknown after its CRD was applied: %v", gvk, last)
	}
	return nil
}

// dryRunAll validates every task on the server before anything is
// written and returns every failure.
func (op *operation) dryRunAll(ctx context.Context) []error {
	var mu gosync.Mutex
	var errs []error
	var todo []*task
	for _, t := range op.tasks {
		if t.state.Status == TaskPending && t.skipDryRun == "" && t.mapped && !t.inSync {
			todo = append(todo, t)
		}
	}
	parallel(op.s.opts.DryRunParallelism, todo, func(t *task) {
		var err error
		switch {
		case t.prune:
			if t.state.Status == TaskPending {
				policy := metav1.DeletePropagationBackground
				err = op.s.resourceFor(mustGVR(op.s, t), t.key.Namespace).Delete(ctx, t.key.Name, metav1.DeleteOptions{DryRun: dryRunOpt(true), PropagationPolicy: &policy})
				if apierrors.IsNotFound(err) {
					err = nil
				}
			}
		case t.hook:
			_, _, err = op.s.create(ctx, t, true)
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
		default:
			var out *unstructured.Unstructured
			out, _, err = op.s.apply(ctx, t, true)
			if err == nil {
				err = op.s.learnLive(ctx, t, out)
			}
			if fields, ok := immutableFields(err, t.key.GroupKind(), t.obj, t.live); ok {
				if t.opts.Has(resource.OptionForce, "true") || op.s.opts.RecreateOnImmutable {
					err = nil // it will be re-created
				} else {
					err = &ImmutableFieldError{Key: t.key, Fields: fields, Err: err}
				}
			}
		}
		if err != nil {
			var imm *ImmutableFieldError
			if !errors.As(err, &imm) {
				err = fmt.Errorf("%s: %w", t.key, err)
			}
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			op.set(t, TaskPending, "", "dry run: "+err.Error())
		}
	})
	return errs
}

// dryRun validates every task and reports the plan without writing.
func (op *operation) dryRun(ctx context.Context) (Result, error) {
	errs := op.dryRunAll(ctx)
	for _, t := range op.tasks {
		if t.state.Status != TaskPending {
			continue
		}
		if t.state.Message != "" {
			op.set(t, TaskFailed, "", t.state.Message)
			continue
		}
		switch {
		case t.prune:
			op.set(t, TaskSkipped, Pruned, "would be pruned (dry run)")
		case t.skipDryRun != "":
			op.set(t, TaskSkipped, Planned, "not validated: "+t.skipDryRun)
		case t.live == nil:
			op.set(t, TaskSucceeded, Created, "would be created (dry run)")
		default:
			op.set(t, TaskSucceeded, Planned, "would be applied (dry run)")
		}
	}
	if len(errs) > 0 {
		return op.fail(Failed, fmt.Errorf("sync: dry run failed: %w", errors.Join(errs...)))
	}
	return op.result(Succeeded, "dry run: nothing was written"), nil
}

func mustGVR(s *Syncer, t *task) schema.GroupVersionResource {
	if t.mapped {
		return t.gvr
	}
	if m, err := s.mapper.RESTMapping(t.obj.GroupVersionKind().GroupKind(), t.obj.GroupVersionKind().Version); err == nil {
		t.gvr, t.mapped = m.Resource, true
	}
	return t.gvr
}

// markNamespaceDryRuns skips the server-side dry-run of objects whose
// namespace this sync creates as one of its objects, or, in a dry-run
// sync, as its destination (CreateNamespace=true): the server would refuse
// them only because the namespace does not exist yet. A real sync creates
// its destination namespace before this (createNamespace), so every
// object in it is validated.
func (op *operation) markNamespaceDryRuns(ctx context.Context) {
	created := map[string]bool{}
	for _, t := range op.tasks {
		if !t.prune && t.key.GroupKind() == (schema.GroupKind{Kind: "Namespace"}) && t.live == nil {
			created[t.key.Name] = true
		}
	}
	if ns := op.req.Namespace; ns != "" && op.req.Options.Has(resource.OptionCreateNamespace, "true") {
		if _, err := op.s.resourceFor(gvrNamespace, "").Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			created[ns] = true
		}
	}
	for _, t := range op.tasks {
		if t.skipDryRun == "" && t.key.Namespace != "" && created[t.key.Namespace] {
			t.skipDryRun = "its namespace is created by this sync"
		}
	}
}

// prepareHook deletes the previous run of a BeforeHookCreation hook and
// adds the finalizer that keeps the hook until its result is read. A hook
// whose create this operation already sent (a resumed operation whose
// create's answer was lost) is not deleted: the object under its name is
// this operation's own.
func (op *operation) prepareHook(ctx context.Context, t *task) error {
	op.mu.Lock()
	createSent := t.state.Name != "" && t.state.UID == ""
	op.mu.Unlock()
	if t.hookInfo.HasDeletePolicy(hooks.BeforeHookCreation) && !createSent {
		rc := op.s.resourceFor(t.gvr, t.key.Namespace)
		old, err := rc.Get(ctx, t.key.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("find previous hook: %w", err)
		default:
			if err := op.s.removeFinalizer(ctx, t.gvr, old); err != nil {
				return err
			}
			policy := metav1.DeletePropagationBackground
			if err := rc.Delete(ctx, t.key.Name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete previous hook: %w", err)
			}
			if err := op.waitGone(ctx, t); err != nil {
				return err
			}
		}
	}
	fins := t.obj.GetFinalizers()
	for _, f := range fins {
		if f == hooks.Finalizer {
			return nil
		}
	}
	t.obj.SetFinalizers(append(fins, hooks.Finalizer))
	return nil
}

// markInSync asks InSync which objects already match their desired state;
// with ApplyOutOfSyncOnly those are neither dry-run nor written.
func (op *operation) markInSync(ctx context.Context) {
	inSync := op.s.with.InSync
	if op.req.InSync != nil {
		inSync = op.req.InSync
	}
	if inSync == nil {
		return
	}
	var todo []*task
	for _, t := range op.tasks {
		if t.hook || t.prune || t.live == nil || t.state.Status != TaskPending {
			continue
		}
		enabled := op.s.opts.ApplyOutOfSyncOnly
		if v, set := t.opts.Bool(resource.OptionApplyOutOfSyncOnly); set {
			enabled = v
		}
		if enabled {
			todo = append(todo, t)
		}
	}
	parallel(op.s.opts.DryRunParallelism, todo, func(t *task) {
		// The comparison ignores tracking annotations, so an object that
		// does not carry ours yet (one being adopted) is never "in sync".
		if op.s.with.Tracking.AppOf(t.live) != op.req.App {
			return
		}
		if ok, err := inSync(ctx, t.obj, t.live); err == nil && ok {
			t.inSync = true
		}
	})
}
