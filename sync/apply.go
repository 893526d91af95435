package sync

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kubegitops/gitops/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/csaupgrade"
)

func (s *Syncer) fieldValidation(t *task) string {
	if t.opts.Has(resource.OptionValidate, "false") {
		return "Ignore"
	}
	return "Strict"
}

func (s *Syncer) useSSA(t *task) bool {
	if v, set := t.opts.Bool(resource.OptionServerSideApply); set {
		return v
	}
	return !s.opts.ClientSideApply
}

// apply writes one task's object and returns what the server holds now.
// dryRun asks the server to validate and admit the write without storing it.
func (s *Syncer) apply(ctx context.Context, t *task, dryRun bool) (*unstructured.Unstructured, Action, error) {
	if t.opts.Has(resource.OptionReplace, "true") {
		return s.replace(ctx, t, dryRun)
	}
	var (
		out *unstructured.Unstructured
		err error
	)
	if s.useSSA(t) {
		out, err = s.serverSideApply(ctx, t, dryRun)
	} else {
		out, err = s.clientSideApply(ctx, t, dryRun)
	}
	if err != nil {
		return nil, "", err
	}
	return out, actionOf(t.live, out), nil
}

func actionOf(before, after *unstructured.Unstructured) Action {
	switch {
	case before == nil:
		return Created
	case before.GetResourceVersion() == after.GetResourceVersion():
		return Unchanged
	}
	return Configured
}

func dryRunOpt(dryRun bool) []string {
	if dryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

func (s *Syncer) serverSideApply(ctx context.Context, t *task, dryRun bool) (*unstructured.Unstructured, error) {
	if !dryRun && t.live != nil && !t.opts.Has(resource.OptionClientSideApplyMigration, "false") {
		if err := s.migrateClientSideFields(ctx, t); err != nil {
			return nil, err
		}
	}
	body, err := json.Marshal(t.obj.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: encode: %w", t.key, err)
	}
	force := s.opts.ForceConflicts
	var out *unstructured.Unstructured
	err = retryTransient(ctx, func() error {
		var err error
		out, err = s.resourceFor(t.gvr, t.key.Namespace).Patch(ctx, t.key.Name, types.ApplyPatchType, body, metav1.PatchOptions{
			FieldManager: s.opts.FieldManager, Force: &force, DryRun: dryRunOpt(dryRun), FieldValidation: s.fieldValidation(t),
		})
		return err
	})
	if err != nil && t.opts.Has(resource.OptionValidate, "false") && isSchemaError(err) {
		// Field validation off does not reach server-side apply, which
		// must type every field it merges.
		return out, fmt.Errorf("%w (Validate=false does not apply to server-side apply, which needs every field declared in the schema; ServerSideApply=false applies with validation off)", err)
	}
	return out, err
}

// migrateClientSideFields hands the fields a client-side apply (kubectl
// apply, or this syncer in client-side mode) owns over to our server-side
// manager, so that the first server-side apply can remove fields that were
// deleted from Git instead of leaving them owned by the old manager forever.
func (s *Syncer) migrateClientSideFields(ctx context.Context, t *task) error {
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(t.live, sets.New(s.opts.ClientSideManagers...), s.opts.FieldManager)
	if err != nil || patch == nil {
		return err // nil patch: nothing to migrate
	}
	return retryTransient(ctx, func() error {
		_, err := s.resourceFor(t.gvr, t.key.Namespace).Patch(ctx, t.key.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
		return err
	})
}

// clientSideApply does what kubectl apply does: a three-way merge of the
// last applied configuration, the desired object and the live object
// (strategic merge for built-in kinds, JSON merge for custom resources), and
// records the desired object as the new last applied configuration.
func (s *Syncer) clientSideApply(ctx context.Context, t *task, dryRun bool) (*unstructured.Unstructured, error) {
	desired := t.obj.DeepCopy()
	modified, err := lastAppliedOf(desired)
	if err != nil {
		return nil, fmt.Errorf("%s: encode: %w", t.key, err)
	}
	ann := desired.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[resource.AnnotationLastApplied] = string(modified)
	desired.SetAnnotations(ann)
	rc := s.resourceFor(t.gvr, t.key.Namespace)
	manager := s.opts.FieldManager + "-client-side"
	if t.live == nil {
		var out *unstructured.Unstructured
		err := retryTransient(ctx, func() error {
			var err error
			out, err = rc.Create(ctx, desired, metav1.CreateOptions{FieldManager: manager, DryRun: dryRunOpt(dryRun), FieldValidation: s.fieldValidation(t)})
			return err
		})
		return out, err
	}
	original := []byte(t.live.GetAnnotations()[resource.AnnotationLastApplied])
	modifiedWithAnn, err := json.Marshal(desired.Object)
	if err != nil {
		return nil, err
	}
	current, err := json.Marshal(t.live.Object)
	if err != nil {
		return nil, err
	}
	var patch []byte
	var patchType types.PatchType
	if typed, err := scheme.Scheme.New(t.obj.GroupVersionKind()); err == nil {
		meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
		if err != nil {
			return nil, err
		}
		patch, err = strategicpatch.CreateThreeWayMergePatch(original, modifiedWithAnn, current, meta, true)
		if err != nil {
			return nil, fmt.Errorf("%s: three-way merge: %w", t.key, err)
		}
		patchType = types.StrategicMergePatchType
	} else {
		patch, err = jsonmergepatch.CreateThreeWayJSONMergePatch(original, modifiedWithAnn, current)
		if err != nil {
			return nil, fmt.Errorf("%s: three-way merge: %w", t.key, err)
		}
		patchType = types.MergePatchType
	}
	var out *unstructured.Unstructured
	err = retryTransient(ctx, func() error {
		var err error
		out, err = rc.Patch(ctx, t.key.Name, patchType, patch, metav1.PatchOptions{FieldManager: manager, DryRun: dryRunOpt(dryRun), FieldValidation: s.fieldValidation(t)})
		return err
	})
	return out, err
}

// lastAppliedOf is the object as kubectl records it: without the annotation
// itself.
func lastAppliedOf(obj *unstructured.Unstructured) ([]byte, error) {
	c := obj.DeepCopy()
	ann := c.GetAnnotations()
	delete(ann, resource.AnnotationLastApplied)
	if len(ann) == 0 {
		ann = nil
	}
	c.SetAnnotations(ann)
	return json.Marshal(c.Object)
}

// replace writes the object whole (PUT), or creates it (Replace=true).
func (s *Syncer) replace(ctx context.Context, t *task, dryRun bool) (*unstructured.Unstructured, Action, error) {
	rc := s.resourceFor(t.gvr, t.key.Namespace)
	obj := t.obj.DeepCopy()
	var out *unstructured.Unstructured
	if t.live == nil {
		err := retryTransient(ctx, func() error {
			var err error
			out, err = rc.Create(ctx, obj, metav1.CreateOptions{FieldManager: s.opts.FieldManager, DryRun: dryRunOpt(dryRun), FieldValidation: s.fieldValidation(t)})
			return err
		})
		return out, Created, err
	}
	obj.SetResourceVersion(t.live.GetResourceVersion())
	err := retryTransient(ctx, func() error {
		var err error
		out, err = rc.Update(ctx, obj, metav1.UpdateOptions{FieldManager: s.opts.FieldManager, DryRun: dryRunOpt(dryRun), FieldValidation: s.fieldValidation(t)})
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return out, actionOf(t.live, out), nil
}

// create writes a hook: always a create, so its UID is the one this sync
// made. An existing object of the same name (a hook without
// BeforeHookCreation) is adopted as it is.
func (s *Syncer) create(ctx context.Context, t *task, dryRun bool) (*unstructured.Unstructured, Action, error) {
	rc := s.resourceFor(t.gvr, t.key.Namespace)
	var out *unstructured.Unstructured
	err := retryTransient(ctx, func() error {
		var err error
		out, err = rc.Create(ctx, t.obj, metav1.CreateOptions{FieldManager: s.opts.FieldManager, DryRun: dryRunOpt(dryRun), FieldValidation: s.fieldValidation(t)})
		return err
	})
	if apierrors.IsAlreadyExists(err) && !dryRun {
		err = retryTransient(ctx, func() error {
			var err error
			out, err = rc.Get(ctx, t.key.Name, metav1.GetOptions{})
			return err
		})
		return out, Unchanged, err
	}
	return out, Created, err
}
