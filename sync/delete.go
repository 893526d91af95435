package sync

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/kubegitops/gitops/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DeleteRequest asks to delete every live object an application manages:
// the cascading deletion of an application (Argo CD's resources
// finalizer).
type DeleteRequest struct {
	// App names the application; its objects are found through
	// Collaborators.ManagedObjects, which is required.
	App string
	// Propagation is the propagation policy of every delete. Default
	// Foreground, as Argo CD's resources finalizer.
	Propagation metav1.DeletionPropagation
	// Admit, when set, is asked before each delete (prune=true); an object
	// it refuses is not deleted and is reported in the error.
	Admit func(ctx context.Context, obj *unstructured.Unstructured, namespaced, prune bool) error
	// DryRun sends every delete as a server-side dry-run.
	DryRun bool
	// ConfirmDelete confirms the deletion of objects whose sync options say
	// Delete=confirm; without it they wait (DeleteResult.PendingConfirmation).
	ConfirmDelete bool
}

// DeleteResult says where a deletion stands. Deletion is asynchronous on
// the server (finalizers, foreground propagation), so a caller calls
// Delete again until Remaining and Deleted are both empty.
type DeleteResult struct {
	// Deleted are the objects this call sent a delete for.
	Deleted []resource.Key
	// Remaining are objects already being deleted, or held back until
	// the others are gone (Namespaces and CustomResourceDefinitions go
	// last, so that deleting them does not delete objects out of order).
	Remaining []resource.Key
	// Kept are objects whose sync options say Delete=false; they stay.
	Kept []resource.Key
	// PendingConfirmation are objects whose sync options say
	// Delete=confirm: they are deleted only with
	// DeleteRequest.ConfirmDelete, and the deletion is not done until then.
	PendingConfirmation []resource.Key
}

// Done reports whether nothing of the application is left to delete.
func (r DeleteResult) Done() bool {
	return len(r.Deleted) == 0 && len(r.Remaining) == 0 && len(r.PendingConfirmation) == 0
}

// Delete deletes the live objects of an application, with these rules:
//   - objects are the ones Collaborators.ManagedObjects names for req.App, each
//     read again from the server (for its UID and annotations);
//   - an object whose sync options hold Delete=false is kept (Prune=false
//     does not protect an object from its application's deletion), and
//     one with Delete=confirm waits for DeleteRequest.ConfirmDelete;
//   - an object already being deleted is reported Remaining, not deleted
//     again;
//   - Namespaces and CustomResourceDefinitions are deleted only once no
//     other object of the app is left, since deleting them deletes what
//     they hold;
//   - every delete carries the object's UID as a precondition, so an
//     object re-created under the same name is never deleted by mistake;
//   - an object refused by Admit or whose delete fails is not retried
//     here; all such failures come back joined in the error, each naming
//     its object, while the other deletes go on.
func (s *Syncer) Delete(ctx context.Context, req DeleteRequest) (DeleteResult, error) {
	if s.with.ManagedObjects == nil {
		return DeleteResult{}, fmt.Errorf("sync: delete %s: Collaborators.ManagedObjects is not set", req.App)
	}
	if req.Propagation == "" {
		req.Propagation = metav1.DeletePropagationForeground
	}
	managed, err := s.with.ManagedObjects(ctx, req.App)
	if err != nil {
		return DeleteResult{}, fmt.Errorf("sync: delete %s: managed objects: %w", req.App, err)
	}
	sort.Slice(managed, func(i, j int) bool {
		return resource.KeyOf(managed[i]).String() < resource.KeyOf(managed[j]).String()
	})
	var res DeleteResult
	var errs []error
	var last []*unstructured.Unstructured
	for _, obj := range managed {
		if deletedLast(obj.GroupVersionKind().GroupKind()) {
			last = append(last, obj)
			continue
		}
		if err := s.deleteOne(ctx, req, obj, &res); err != nil {
			errs = append(errs, err)
		}
	}
	for _, obj := range last {
		if len(res.Deleted) > 0 || len(res.Remaining) > 0 || len(res.PendingConfirmation) > 0 {
			res.Remaining = append(res.Remaining, resource.KeyOf(obj))
			continue
		}
		if err := s.deleteOne(ctx, req, obj, &res); err != nil {
			errs = append(errs, err)
		}
	}
	return res, errors.Join(errs...)
}

// deletedLast reports kinds whose deletion deletes other objects.
func deletedLast(gk schema.GroupKind) bool {
	return gk == schema.GroupKind{Kind: "Namespace"} ||
		gk == schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
}

// deleteOne reads one object again and deletes it unless a rule keeps it.
func (s *Syncer) deleteOne(ctx context.Context, req DeleteRequest, obj *unstructured.Unstructured, res *DeleteResult) error {
	key := resource.KeyOf(obj)
	gvk := obj.GroupVersionKind()
	m, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s: cannot map the kind for deletion: %w", key, err)
	}
	rc := s.resourceFor(m.Resource, key.Namespace)
	var live *unstructured.Unstructured
	err = retryTransient(ctx, func() error {
		var err error
		live, err = rc.Get(ctx, key.Name, metav1.GetOptions{})
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", key, err)
	}
	opts, err := resource.ParseOptions(live.GetAnnotations()[resource.AnnotationSyncOptions])
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if opts.Has(resource.OptionDelete, "false") {
		res.Kept = append(res.Kept, key)
		return nil
	}
	if opts.Has(resource.OptionDelete, "confirm") && !req.ConfirmDelete {
		res.PendingConfirmation = append(res.PendingConfirmation, key)
		return nil
	}
	if live.GetDeletionTimestamp() != nil {
		res.Remaining = append(res.Remaining, key)
		return nil
	}
	if req.Admit != nil {
		if err := req.Admit(ctx, live, key.Namespace != "", true); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	uid := live.GetUID()
	policy := req.Propagation
	err = retryTransient(ctx, func() error {
		return rc.Delete(ctx, key.Name, metav1.DeleteOptions{
			PropagationPolicy: &policy,
			Preconditions:     &metav1.Preconditions{UID: &uid},
			DryRun:            dryRunOpt(req.DryRun),
		})
	})
	switch {
	case err == nil:
		res.Deleted = append(res.Deleted, key)
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Gone, or replaced by a new object that is not ours to delete.
	default:
		return fmt.Errorf("%s: delete: %w", key, err)
	}
	return nil
}
