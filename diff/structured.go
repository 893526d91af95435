package diff

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// predictStructuredMerge returns what a server-side apply of desired by our
// field manager would leave, computed locally with structured-merge-diff:
//
//   - desired is merged into live by the kind's schema (lists by their
//     keys, atomic fields whole);
//   - fields we owned that desired no longer sets, and that no other
//     manager owns, are removed. Ours are the fields of our manager's
//     apply, plus, after a client-side apply, those fields of the migrated
//     managers (kubectl-client-side-apply) that the last-applied
//     annotation holds: a client-side manager also owns every default the
//     server filled in at creation, which we never declared;
//   - with Options.HonourOtherManagers, fields that desired sets but that
//     another applier, or a manager writing through a subresource (an
//     HPA's replicas via scale), owns and we do not keep their live value:
//     the field is not ours to revert. A field another manager took by a
//     plain update (kubectl edit) is drift and is compared.
//
// desired and live are normalised; liveRaw carries the managedFields.
// Without managedFields there is nothing to remove: a two-way merge.
//
// Under a deduced schema (IsDeduced: the kind has no model, so every list
// is atomic) an owned field below a field desired sets whole is not
// dropped: the managedFields were written by the server with the kind's
// real schema (a keyed list's items), and desired's atomic value covers
// them. Without this rule a new CRD's objects, compared in the moment
// before the cluster publishes the CRD's schema, lost every keyed list
// item from the prediction and showed as OutOfSync.
func (d *Differ) predictStructuredMerge(tc managedfields.TypeConverter, desired, live, last map[string]any, liveRaw *unstructured.Unstructured) (map[string]any, error) {
	tvDesired, err := toTyped(tc, desired)
	if err != nil {
		return nil, fmt.Errorf("structured merge: desired: %w", err)
	}
	tvLive, err := toTyped(tc, live)
	if err != nil {
		return nil, fmt.Errorf("structured merge: live: %w", err)
	}
	own, err := readOwnership(liveRaw, d.opts.FieldManager, d.opts.MigratedManagers)
	if err != nil {
		return nil, fmt.Errorf("structured merge: %w", err)
	}
	config, err := tvDesired.ToFieldSet()
	if err != nil {
		return nil, fmt.Errorf("structured merge: desired: %w", err)
	}
	if !own.migrated.Empty() && last != nil {
		if tvLast, err := toTyped(tc, last); err == nil {
			if declared, err := tvLast.ToFieldSet(); err == nil {
				own.ours = own.ours.Union(own.migrated.Intersection(declared))
			}
		}
	}
	if d.opts.HonourOtherManagers && !own.honoured.Empty() {
		contested := config.Leaves().Intersection(own.honoured).Difference(own.ours)
		if !contested.Empty() {
			tvDesired = tvDesired.RemoveItems(contested)
		}
	}
	merged, err := tvLive.Merge(tvDesired)
	if err != nil {
		return nil, &modelError{fmt.Errorf("structured merge: %w", err)}
	}
	if !own.ours.Empty() {
		dropped := own.ours.Leaves().Difference(config).Difference(own.others)
		dropped = dropped.Union(droppedItems(own.ours, config, own.others))
		if IsDeduced(tc) {
			dropped = uncovered(dropped, config.Leaves())
		}
		if !dropped.Empty() {
			merged = merged.RemoveItems(dropped)
		}
	}
	out, ok := merged.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("structured merge: result is not an object")
	}
	// The merged value may share maps with its inputs: copy it.
	return deepCopyMap(out), nil
}

// toTyped parses a normalised object with the converter's type for it. A
// failure is a *modelError: the schema does not fit the object.
func toTyped(tc managedfields.TypeConverter, obj map[string]any) (*typed.TypedValue, error) {
	tv, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: obj}, typed.AllowDuplicates)
	if err != nil {
		return nil, &modelError{err}
	}
	return tv, nil
}

// modelError reports that a kind's schema could not type an object (no
// model for the kind, or one that does not fit the object), or merge two.
type modelError struct{ err error }

// Error implements error.
func (e *modelError) Error() string { return e.err.Error() }

// Unwrap returns the schema error.
func (e *modelError) Unwrap() error { return e.err }

// withModel runs fn with the converter Options.Schema gives for gvk. When
// that schema cannot model the objects (fn fails with a *modelError), fn
// runs again with a deduced schema (maps as structs, lists atomic), which
// types any object: a kind that cannot be modelled is still compared, never
// left unknown. The returned note says why the fallback was taken, empty
// when it was not; deduced says fn's result came from a deduced schema
// (the fallback, or a source that has no model of gvk).
func (d *Differ) withModel(ctx context.Context, gvk schema.GroupVersionKind, fn func(managedfields.TypeConverter) error) (note string, deduced bool, err error) {
	tc, err := d.opts.Schema.TypeConverter(ctx, gvk)
	if err != nil {
		return "", false, err
	}
	err = fn(tc)
	var me *modelError
	if !errors.As(err, &me) {
		return "", err == nil && IsDeduced(tc), err
	}
	if err := fn(d.deduced); err != nil {
		return "", false, err
	}
	return fmt.Sprintf("the schema of %s cannot model this object (%v): compared with a deduced schema (lists atomic)", gvk.Kind, me.err), true, nil
}

// deducedConverter marks a converter that deduces types from the object
// (maps as structs, lists atomic) rather than knowing the kind.
type deducedConverter struct{ managedfields.TypeConverter }

// NewDeducedTypeConverter returns a converter that types any object by
// deduction (maps as structs, lists atomic), marked so that IsDeduced
// reports it. A SchemaSource returns it for a kind it has no model of.
func NewDeducedTypeConverter() managedfields.TypeConverter {
	return deducedConverter{managedfields.NewDeducedTypeConverter()}
}

// IsDeduced reports whether tc is a converter of NewDeducedTypeConverter:
// one that knows no kind and guesses every list atomic.
func IsDeduced(tc managedfields.TypeConverter) bool {
	_, ok := tc.(deducedConverter)
	return ok
}

// uncovered returns the paths of set none of whose proper prefixes is in
// leaves: a path below a value set whole is covered by it.
func uncovered(set, leaves *fieldpath.Set) *fieldpath.Set {
	out := &fieldpath.Set{}
	set.Iterate(func(p fieldpath.Path) {
		for i := 1; i < len(p); i++ {
			if leaves.Has(p[:i]) {
				return
			}
		}
		out.Insert(p)
	})
	return out
}

// removeFieldSet removes the fields of set from obj (normalised) through the
// kind's schema, and returns the result.
func removeFieldSet(tc managedfields.TypeConverter, obj map[string]any, set *fieldpath.Set) (map[string]any, error) {
	tv, err := toTyped(tc, obj)
	if err != nil {
		return nil, err
	}
	out, ok := tv.RemoveItems(set).AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("result is not an object")
	}
	return deepCopyMap(out), nil
}

// droppedItems are the list items we own and no longer apply, of which no
// other manager owns any field: server-side apply removes such an item
// whole. Removing only our leaves would leave the fields the server
// defaulted (owned by no one), an item without its merge key.
func droppedItems(ours, config, others *fieldpath.Set) *fieldpath.Set {
	out := &fieldpath.Set{}
	ours.Difference(ours.Leaves()).Difference(config).Iterate(func(p fieldpath.Path) {
		if len(p) == 0 {
			return
		}
		last := p[len(p)-1]
		if last.Key == nil && last.Value == nil && last.Index == nil {
			return // a field, not a list item
		}
		held := false
		others.Iterate(func(o fieldpath.Path) {
			if !held && len(o) >= len(p) && o[:len(p)].Equals(p) {
				held = true
			}
		})
		if !held {
			out.Insert(p)
		}
	})
	return out
}
