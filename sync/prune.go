package sync

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubegitops/gitops/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// decidePrunes settles, before anything runs, which prune tasks may run:
// none unless the request enables pruning; never one marked Prune=false;
// never a cluster-scoped object without PruneClusterScoped; never a
// Namespace that still holds objects this sync applies.
func (op *operation) decidePrunes() {
	used := map[string]bool{}
	for _, t := range op.tasks {
		if !t.prune && t.key.Namespace != "" {
			used[t.key.Namespace] = true
		}
	}
	for _, t := range op.tasks {
		if !t.prune || t.state.Status != TaskPending {
			continue
		}
		switch {
		case !op.req.Prune:
			op.set(t, TaskSkipped, "", "ignored (requires pruning)")
		case t.refused != "":
			op.set(t, TaskSkipped, "", "ignored (refused: "+t.refused+")")
		case t.opts.Has(resource.OptionPrune, "false"):
			op.set(t, TaskSkipped, "", "ignored (Prune=false)")
		case t.key.GroupKind() == (schema.GroupKind{Kind: "Namespace"}) && used[t.key.Name]:
			op.set(t, TaskSkipped, "", "ignored (the namespace still holds objects of this application)")
		case t.key.Namespace == "" && !op.s.opts.PruneClusterScoped:
			op.set(t, TaskSkipped, "", "ignored (cluster-scoped prune not enabled)")
		case t.live.GetDeletionTimestamp() != nil:
			op.set(t, TaskRunning, Pruned, "already being deleted")
		}
	}
}

// needsConfirmation returns the Prune=confirm objects of the group when the
// request has not confirmed them.
func (op *operation) needsConfirmation(g []*task) []resource.Key {
	if op.req.ConfirmPrune {
		return nil
	}
	var keys []resource.Key
	for _, t := range g {
		if t.prune && t.state.Status == TaskPending && t.opts.Has(resource.OptionPrune, "confirm") {
			keys = append(keys, t.key)
		}
	}
	return keys
}

func (op *operation) propagation() metav1.DeletionPropagation {
	v, _ := op.req.Options.Get(resource.OptionPrunePropagationPolicy)
	switch strings.ToLower(v) {
	case "background":
		return metav1.DeletePropagationBackground
	case "orphan":
		return metav1.DeletePropagationOrphan
	}
	return metav1.DeletePropagationForeground
}

// prune deletes one object, guarded by its UID so that an object re-created
// under the same name since we looked is never deleted by mistake.
func (op *operation) prune(ctx context.Context, t *task) {
	gvr := mustGVR(op.s, t)
	if !t.mapped {
		op.set(t, TaskFailed, "", "cannot map the kind for deletion")
		return
	}
	policy := op.propagation()
	uid := t.live.GetUID()
	err := retryTransient(ctx, func() error {
		return op.s.resourceFor(gvr, t.key.Namespace).Delete(ctx, t.key.Name, metav1.DeleteOptions{
			PropagationPolicy: &policy,
			Preconditions:     &metav1.Preconditions{UID: &uid},
		})
	})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		op.set(t, TaskRunning, Pruned, "")
	case apierrors.IsConflict(err):
		op.set(t, TaskSucceeded, Pruned, "already replaced by a new object")
	default:
		op.failTask(ctx, t, "prune: "+err.Error())
	}
}

// managed returns the live objects of the app, from Collaborators.ManagedObjects
// or, without it, by listing every listable kind in the namespaces the app
// uses (and cluster-scoped kinds).
func (s *Syncer) managed(ctx context.Context, req Request, tasks []*task) ([]*unstructured.Unstructured, error) {
	var all []*unstructured.Unstructured
	if s.with.ManagedObjects != nil {
		objs, err := s.with.ManagedObjects(ctx, req.App)
		if err != nil {
			return nil, err
		}
		all = objs
	} else {
		objs, err := s.scan(ctx, tasks, req.Namespace)
		if err != nil {
			return nil, err
		}
		all = objs
	}
	var out []*unstructured.Unstructured
	for _, obj := range all {
		if s.with.Tracking.OwnedBy(obj, req.App) {
			out = append(out, obj)
		}
	}
	return out, nil
}

// scan lists every kind that can be listed and deleted, in the namespaces
// the tasks use and cluster-wide for cluster-scoped kinds.
func (s *Syncer) scan(ctx context.Context, tasks []*task, destNS string) ([]*unstructured.Unstructured, error) {
	namespaces := map[string]bool{}
	if destNS != "" {
		namespaces[destNS] = true
	}
	for _, t := range tasks {
		if t.key.Namespace != "" {
			namespaces[t.key.Namespace] = true
		}
	}
	lists, err := s.disco.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, "list", "delete") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			scopes := []string{""}
			if r.Namespaced {
				scopes = scopes[:0]
				for ns := range namespaces {
					scopes = append(scopes, ns)
				}
			}
			for _, ns := range scopes {
				items, err := s.list(ctx, gvr, ns)
				if err != nil {
					if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
						continue
					}
					return nil, fmt.Errorf("list %s: %w", gvr, err)
				}
				out = append(out, items...)
			}
		}
	}
	return out, nil
}

func hasVerbs(verbs metav1.Verbs, want ...string) bool {
	for _, w := range want {
		found := false
		for _, v := range verbs {
			if v == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
