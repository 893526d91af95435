package appsets

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// preservedAnnotations are annotations people (or other controllers) set
// on an Application that an update by the set keeps: a refresh or a
// deletion approval asked for, the notifications' delivery record.
var preservedAnnotations = []string{
	"argocd.argoproj.io/refresh",
	"argocd.argoproj.io/deletion-approved",
	"notified.notifications.argoproj.io",
}

// resourcesFinalizer is Argo CD's finalizer that deletes an Application's
// objects with it ("/background" and "/foreground" suffixes included).
const resourcesFinalizer = "resources-finalizer.argocd.argoproj.io"

// failure is an error the status reports, with Argo CD's reason.
type failure struct {
	reason string
	err    error
}

// applied is what apply left: the Applications the set owns now, by name.
type applied struct {
	apps map[string]*v1alpha1.Application
	// generated are the names of this generation's Applications.
	generated map[string]bool
	// prunes are the automated prune of each generated Application's
	// template (RollingSync takes automated sync off).
	prunes   map[string]bool
	failures []failure
	// transient: the cache lagged behind a write, or an Application is
	// being deleted; the next reconcile should come soon.
	transient bool
}

func (a *applied) fail(reason string, err error) {
	a.failures = append(a.failures, failure{reason, err})
}

// apply creates, updates and deletes the set's Applications as its policy
// allows. Deletion needs a generation without errors. The error returned
// is one of reading the cache; the writes' failures are in applied.
func (r *Reconciler) apply(ctx context.Context, set *v1alpha1.ApplicationSet, res appset.Result, genErr error) (applied, error) {
	pol := r.policyOf(set)
	owned, err := r.ownedApps(ctx, set)
	if err != nil {
		return applied{}, err
	}
	out := applied{apps: map[string]*v1alpha1.Application{}, generated: map[string]bool{}, prunes: map[string]bool{}}
	for _, u := range res.Applications {
		name := u.GetName()
		out.generated[name] = true
		want, prune, err := r.desiredApp(set, u)
		if err == nil {
			err = r.checkProject(set, want)
		}
		if err != nil {
			out.fail(ReasonApplicationValidationError, err)
			if live, ok := owned[name]; ok {
				out.apps[name] = live // left as it is, as Argo CD does
			}
			continue
		}
		out.prunes[name] = prune
		live, ok := owned[name]
		if !ok {
			existing := &v1alpha1.Application{}
			err := r.client.Get(ctx, types.NamespacedName{Namespace: set.Namespace, Name: name}, existing)
			switch {
			case apierrors.IsNotFound(err):
				if err := r.client.Create(ctx, want); err != nil {
					if apierrors.IsAlreadyExists(err) {
						out.transient = true // the cache has not seen it yet
						continue
					}
					out.fail(ReasonCreateApplicationError, &Error{Set: keyOf(set), App: name, Err: fmt.Errorf("create: %w", err)})
					continue
				}
				out.apps[name] = want
				continue
			case err != nil:
				return applied{}, err
			case !controlledBy(existing, set):
				out.fail(ReasonCreateApplicationError, &Error{Set: keyOf(set), App: name, Err: ErrNotOwned})
				continue
			}
			live = existing
		}
		out.apps[name] = live
		if live.DeletionTimestamp != nil {
			out.transient = true // created again once it is gone
			continue
		}
		if !pol.update {
			continue
		}
		next, err := r.update(ctx, set, want, live)
		switch {
		case apierrors.IsConflict(err):
			out.transient = true
		case err != nil:
			out.fail(ReasonUpdateApplicationError, err)
		default:
			out.apps[name] = next
		}
	}
	for name, live := range owned {
		if out.generated[name] {
			continue
		}
		if !pol.delete || genErr != nil || live.DeletionTimestamp != nil {
			out.apps[name] = live
			out.transient = out.transient || live.DeletionTimestamp != nil
			continue
		}
		if err := r.deleteApp(ctx, set, live, pol.preserve); err != nil {
			if apierrors.IsConflict(err) {
				out.transient = true
			} else {
				out.fail(ReasonDeleteApplicationError, err)
			}
			out.apps[name] = live
		}
	}
	return out, nil
}

// ownedApps lists the Applications of the set's namespace the set
// controls, by name.
func (r *Reconciler) ownedApps(ctx context.Context, set *v1alpha1.ApplicationSet) (map[string]*v1alpha1.Application, error) {
	list := &v1alpha1.ApplicationList{}
	if err := r.client.List(ctx, list, client.InNamespace(set.Namespace), client.MatchingFields{ownerIndex: set.Name}); err != nil {
		return nil, &Error{Set: keyOf(set), Err: fmt.Errorf("list Applications: %w", err)}
	}
	out := map[string]*v1alpha1.Application{}
	for i := range list.Items {
		if a := &list.Items[i]; controlledBy(a, set) {
			out[a.Name] = a
		}
	}
	return out, nil
}

func controlledBy(a *v1alpha1.Application, set *v1alpha1.ApplicationSet) bool {
	ref := metav1.GetControllerOf(a)
	return ref != nil && ref.UID == set.UID && ref.Kind == v1alpha1.ApplicationSetKind
}

// desiredApp is a generated Application as the set writes it: typed, in
// the set's namespace, controlled by the set; under RollingSync without
// automated sync (prune is what the template's automated policy said).
func (r *Reconciler) desiredApp(set *v1alpha1.ApplicationSet, u *unstructured.Unstructured) (*v1alpha1.Application, bool, error) {
	app, err := typed(u)
	if err != nil {
		return nil, false, &Error{Set: keyOf(set), App: u.GetName(), Err: err}
	}
	if app.Namespace != set.Namespace {
		return nil, false, &Error{Set: keyOf(set), App: app.Name,
			Err: fmt.Errorf("metadata.namespace %q: a set writes its Applications in its own namespace %q", app.Namespace, set.Namespace)}
	}
	app.TypeMeta = metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.ApplicationKind}
	app.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.ApplicationSetKind,
		Name: set.Name, UID: set.UID, Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}}
	prune := false
	if sp := app.Spec.SyncPolicy; r.rollingSync(set) && sp != nil && sp.Automated != nil {
		prune = sp.Automated.Prune
		sp.Automated = nil
	}
	return app, prune, nil
}

// update writes the generated labels, annotations (but the preserved
// ones), finalizers and spec over the live Application, keeping the
// fields ignoreApplicationDifferences names; guarded by the live
// resourceVersion (a conflict is returned as it is).
func (r *Reconciler) update(ctx context.Context, set *v1alpha1.ApplicationSet, want, live *v1alpha1.Application) (*v1alpha1.Application, error) {
	if len(set.Spec.IgnoreApplicationDifferences) > 0 {
		gen, err := v1alpha1.ApplicationToUnstructured(want)
		if err != nil {
			return nil, &Error{Set: keyOf(set), App: want.Name, Err: err}
		}
		cur, err := v1alpha1.ApplicationToUnstructured(live)
		if err != nil {
			return nil, &Error{Set: keyOf(set), App: want.Name, Err: err}
		}
		kept, err := appset.KeepIgnoredDifferences(ctx, set, gen, cur)
		if err != nil {
			return nil, err
		}
		if want, err = typed(kept); err != nil {
			return nil, &Error{Set: keyOf(set), App: live.Name, Err: fmt.Errorf("with ignoreApplicationDifferences kept: %w", err)}
		}
	}
	next := live.DeepCopy()
	next.Labels = want.Labels
	next.Annotations = want.Annotations
	keepAnnotations, keepLabels := preservedAnnotations, []string(nil)
	if pf := set.Spec.PreservedFields; pf != nil {
		keepAnnotations = append(slices.Clone(keepAnnotations), pf.Annotations...)
		keepLabels = pf.Labels
	}
	// The controller's global.preserved.* too (ControllerSettings).
	keepAnnotations = append(slices.Clone(keepAnnotations), r.opts.Settings.PreservedAnnotations...)
	keepLabels = append(slices.Clone(keepLabels), r.opts.Settings.PreservedLabels...)
	next.Annotations = keep(next.Annotations, live.Annotations, keepAnnotations)
	next.Labels = keep(next.Labels, live.Labels, keepLabels)
	next.Finalizers = want.Finalizers
	next.Spec = want.Spec
	if sameApp(live, next) {
		return live, nil
	}
	if err := r.client.Patch(ctx, next, client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return nil, err
		}
		return nil, &Error{Set: keyOf(set), App: live.Name, Err: fmt.Errorf("update: %w", err)}
	}
	return next, nil
}

// keep returns want with the live values of keys (Argo CD's
// preservedFields and the annotations people set).
func keep(want, live map[string]string, keys []string) map[string]string {
	for _, k := range keys {
		if v, ok := live[k]; ok {
			if want == nil {
				want = map[string]string{}
			}
			want[k] = v
		}
	}
	return want
}

// sameApp compares what the set writes.
func sameApp(a, b *v1alpha1.Application) bool {
	if !maps.Equal(a.Labels, b.Labels) || !maps.Equal(a.Annotations, b.Annotations) || !slices.Equal(a.Finalizers, b.Finalizers) {
		return false
	}
	return resource.ObjectsEqual(&a.Spec, &b.Spec)
}

// deleteApp deletes an Application the set no longer generates; with
// preserve its resources finalizers are removed first, so that its
// objects stay.
func (r *Reconciler) deleteApp(ctx context.Context, set *v1alpha1.ApplicationSet, live *v1alpha1.Application, preserve bool) error {
	if preserve {
		if err := r.dropResourcesFinalizers(ctx, live); err != nil {
			if apierrors.IsConflict(err) {
				return err
			}
			return &Error{Set: keyOf(set), App: live.Name, Err: err}
		}
	}
	uid := live.UID
	if err := r.client.Delete(ctx, live, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
		return &Error{Set: keyOf(set), App: live.Name, Err: fmt.Errorf("delete: %w", err)}
	}
	return nil
}

// dropResourcesFinalizers removes Argo CD's resources finalizers from an
// Application, guarded by its resourceVersion.
func (r *Reconciler) dropResourcesFinalizers(ctx context.Context, live *v1alpha1.Application) error {
	kept := slices.DeleteFunc(slices.Clone(live.Finalizers), func(f string) bool {
		return f == resourcesFinalizer || strings.HasPrefix(f, resourcesFinalizer+"/")
	})
	if len(kept) == len(live.Finalizers) {
		return nil
	}
	next := live.DeepCopy()
	next.Finalizers = kept
	if err := r.client.Patch(ctx, next, client.MergeFromWithOptions(live, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return err
		}
		return fmt.Errorf("remove the resources finalizer: %w", err)
	}
	*live = *next
	return nil
}

// typed decodes a generated (or kept) Application manifest.
func typed(u *unstructured.Unstructured) (*v1alpha1.Application, error) {
	app := &v1alpha1.Application{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, app); err != nil {
		return nil, err
	}
	return app, nil
}

func ptrTo[T any](v T) *T { return &v }
