package diff

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kubegitops/gitops/resource"
)

// removedField is a field an ignore rule took out of an object, with its
// value, so that it can be put back where the patch needs it.
type removedField struct {
	path  fieldPath
	value any
}

// ignore removes from obj (normalised, modified in place) every field that
// the rules matching key ignore, and reports whether any rule matched.
// liveRaw (nil for none) supplies the managedFields that
// managedFieldsManagers rules read. When rec is not nil the removed fields
// are recorded in an order in which restore can put them back.
func (d *Differ) ignore(ctx context.Context, key resource.Key, gvk schema.GroupVersionKind, liveRaw *unstructured.Unstructured, obj map[string]any, rec *[]removedField) (bool, error) {
	gk := gvk.GroupKind()
	matched := false
	var paths []fieldPath
	var jqInput any
	for _, r := range d.rules {
		if !r.matches(gk, key.Namespace, key.Name) {
			continue
		}
		matched = true
		paths = append(paths, r.pointers...)
		for _, q := range r.jq {
			if jqInput == nil {
				jqInput = toJQ(obj)
			}
			ps, err := q.paths(ctx, jqInput, d.opts.JQTimeout)
			if err != nil {
				return false, &RuleError{Rule: r.index, Expression: q.expr, Err: err}
			}
			paths = append(paths, ps...)
		}
		if len(r.managers) > 0 && liveRaw != nil {
			ps, err := d.managedPaths(ctx, gvk, liveRaw, obj, r.managers)
			if err != nil {
				return false, &RuleError{Rule: r.index, Expression: fmt.Sprint(r.managers), Err: err}
			}
			paths = append(paths, ps...)
		}
	}
	if len(paths) == 0 {
		return matched, nil
	}
	paths = dedupePaths(paths)
	sortPathsForRemoval(paths)
	var removed []removedField
	for _, p := range paths {
		if v, ok := remove(obj, p); ok && rec != nil {
			removed = append(removed, removedField{path: p, value: v})
		}
	}
	if rec != nil {
		for i := len(removed) - 1; i >= 0; i-- {
			*rec = append(*rec, removed[i])
		}
	}
	return matched, nil
}

// managedPaths returns the paths, in obj, of the leaf fields that the named
// managers own in liveRaw's managedFields.
func (d *Differ) managedPaths(ctx context.Context, gvk schema.GroupVersionKind, liveRaw *unstructured.Unstructured, obj map[string]any, managers []string) ([]fieldPath, error) {
	set, err := managedBy(liveRaw, managers)
	if err != nil || set.Empty() {
		return nil, err
	}
	var without map[string]any
	if _, _, err := d.withModel(ctx, gvk, func(tc managedfields.TypeConverter) error {
		var err error
		without, err = removeFieldSet(tc, obj, set.Leaves())
		return err
	}); err != nil {
		return nil, err
	}
	var out []fieldPath
	for _, c := range compareObjects(obj, without, d.trees.forGVK(gvk)) {
		if p, ok := splitPointer(c.Path); ok && len(p) > 0 {
			out = append(out, p)
		}
	}
	return out, nil
}

// StripIgnored returns a copy of obj's content without the fields that the
// Differ's ignore rules (system rules and the application's) ignore for it;
// managedFieldsManagers rules read obj's own managedFields. Two versions of
// an object whose stripped copies are equal differ only in ignored fields:
// the test Argo CD's ignoreResourceUpdates makes of a watched change.
func (d *Differ) StripIgnored(ctx context.Context, obj *unstructured.Unstructured) (map[string]any, error) {
	c := obj.DeepCopy().Object
	if _, err := d.ignore(ctx, resource.KeyOf(obj), obj.GroupVersionKind(), obj, c, nil); err != nil {
		return nil, err
	}
	return c, nil
}
