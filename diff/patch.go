package diff

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// makePatch returns the patch from live to predicted (both normalised, with
// ignored fields at their live values): a strategic merge patch when the
// typed scheme knows gvk, a JSON merge patch otherwise.
func (d *Differ) makePatch(gvk schema.GroupVersionKind, live, predicted map[string]any) (Patch, error) {
	if obj, err := d.trees.scheme.New(gvk); err == nil {
		lj, err := json.Marshal(live)
		if err != nil {
			return Patch{}, err
		}
		pj, err := json.Marshal(predicted)
		if err != nil {
			return Patch{}, err
		}
		meta, err := strategicpatch.NewPatchMetaFromStruct(obj)
		if err != nil {
			return Patch{}, fmt.Errorf("patch metadata: %w", err)
		}
		data, err := strategicpatch.CreateTwoWayMergePatchUsingLookupPatchMeta(lj, pj, meta)
		if err != nil {
			return Patch{}, fmt.Errorf("strategic merge patch: %w", err)
		}
		if string(data) == "{}" {
			return Patch{}, nil
		}
		return Patch{Type: types.StrategicMergePatchType, data: data}, nil
	}
	mp := mergePatch(live, predicted)
	if len(mp) == 0 {
		return Patch{}, nil
	}
	data, err := json.Marshal(mp)
	if err != nil {
		return Patch{}, err
	}
	return Patch{Type: types.MergePatchType, data: data}, nil
}

// mergePatch returns the RFC 7386 merge patch that turns a into b. Lists
// are replaced whole; an empty map or list equals an absent field.
func mergePatch(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, av := range a {
		if _, ok := b[k]; !ok && !isEmptyOrNil(av) {
			out[k] = nil
		}
	}
	for k, bv := range b {
		av, ok := a[k]
		if !ok {
			if !isEmptyOrNil(bv) {
				out[k] = bv
			}
			continue
		}
		am, aok := av.(map[string]any)
		bm, bok := bv.(map[string]any)
		if aok && bok {
			if sub := mergePatch(am, bm); len(sub) > 0 {
				out[k] = sub
			}
			continue
		}
		if !valuesEqual(av, bv) {
			out[k] = bv
		}
	}
	return out
}

// valuesEqual compares two normalised values with the comparison's rules.
func valuesEqual(a, b any) bool {
	var c comparer
	c.compareValues(a, b, nil)
	return len(c.changes) == 0
}
