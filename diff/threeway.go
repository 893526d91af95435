package diff

import (
	"encoding/json"
	"errors"
	"fmt"
)

// predictThreeWay returns what client-side apply would leave on the server:
// desired merged into live, with the fields that last (the last-applied
// annotation, absent when there is none; see lastRef) holds and desired no
// longer does deleted. All three are normalised; the result is a fresh
// object that shares nothing with its inputs.
//
// The rules, per value:
//   - two maps merge key by key: desired's keys win, recursively; a live key
//     desired lacks is kept unless last holds it (we set it and removed it
//     since) or the field is a union with retainKeys (a Deployment's
//     strategy), whose keys desired does not name are dropped;
//   - a list of a built-in kind whose field has patchStrategy "merge" merges
//     by its patchMergeKey (containers by name, ports by containerPort):
//     desired's items in desired's order, each merged with the live item of
//     the same key, then live items desired lacks and last does not hold;
//     a merge list of scalars (finalizers) is a union by the same rule;
//   - any other list, and any scalar, is desired's value.
//
// Custom resources have no patch strategies: their lists are replaced, as
// with a JSON merge patch.
func predictThreeWay(last lastRef, desired, live map[string]any, root *typeNode) map[string]any {
	return mergeMap(last.object(), desired, live, root, false)
}

// parseLastApplied decodes a last-applied annotation; empty gives nil.
func parseLastApplied(raw string) (map[string]any, error) {
	if raw == "" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("last-applied annotation is not a JSON object: %w", errorWithoutInput(err))
	}
	return m, nil
}

// errorWithoutInput keeps the kind of a JSON error but not the input it may
// quote (a last-applied Secret holds plaintext).
func errorWithoutInput(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("syntax error at offset %d", se.Offset)
	}
	return fmt.Errorf("invalid JSON")
}

func mergeValue(last lastRef, desired, live any, t *typeNode, f *typeField) any {
	switch d := desired.(type) {
	case map[string]any:
		if l, ok := live.(map[string]any); ok {
			return mergeMap(last.object(), d, l, t, f != nil && f.retainKeys)
		}
	case []any:
		if l, ok := live.([]any); ok && f != nil && f.merge {
			if f.mergeKey != "" {
				return mergeKeyedList(last.array(), d, l, f.mergeKey, t.elemNode())
			}
			return mergeScalarList(last.array(), d, l, t.elemNode())
		}
	}
	return deepCopyValue(desired)
}

// mergeMap merges the maps desired and live of type t; last is the
// last-applied map at the same place (absent: none).
func mergeMap(last lastRef, desired, live map[string]any, t *typeNode, retainKeys bool) map[string]any {
	out := make(map[string]any, len(live)+1)
	if !retainKeys {
		for k, lv := range live {
			if _, ok := desired[k]; ok {
				continue
			}
			if last.has(k, t) {
				continue // we applied it before and no longer do: deleted
			}
			out[k] = deepCopyValue(lv)
		}
	}
	for k, dv := range desired {
		var f *typeField
		var cn *typeNode
		if t != nil {
			switch t.kind {
			case nodeStruct:
				if f = t.fields[k]; f != nil {
					cn = f.node
				}
			case nodeMap:
				cn = t.elem
			}
		}
		var lv lastRef
		switch dv.(type) {
		case map[string]any, []any:
			lv = last.field(k, t) // only a map or list merges
		}
		out[k] = mergeValue(lv, dv, live[k], cn, f)
	}
	return out
}

func mergeKeyedList(last lastRef, desired, live []any, key string, et *typeNode) []any {
	out := make([]any, 0, len(desired)+len(live))
	used := make([]bool, len(live))
	for _, d := range desired {
		dm, ok := d.(map[string]any)
		if !ok {
			out = append(out, deepCopyValue(d))
			continue
		}
		kv := dm[key]
		li := indexByKey(live, key, kv)
		if li < 0 {
			out = append(out, deepCopyValue(d))
			continue
		}
		used[li] = true
		out = append(out, mergeMap(last.item(key, kv, et), dm, live[li].(map[string]any), et, false))
	}
	for i, l := range live {
		if used[i] {
			continue
		}
		if lm, ok := l.(map[string]any); ok && last.item(key, lm[key], et).exists() {
			continue // we applied this item before and no longer do
		}
		out = append(out, deepCopyValue(l))
	}
	return out
}

func indexByKey(list []any, key string, want any) int {
	if want == nil {
		return -1
	}
	for i, item := range list {
		if m, ok := item.(map[string]any); ok && scalarEqual(m[key], want) {
			return i
		}
	}
	return -1
}

func mergeScalarList(last lastRef, desired, live []any, et *typeNode) []any {
	out := make([]any, 0, len(desired)+len(live))
	out = append(out, desired...)
	for _, l := range live {
		if containsScalar(desired, l) || last.containsScalar(l, et) {
			continue
		}
		out = append(out, l)
	}
	return out
}

func containsScalar(list []any, v any) bool {
	for _, x := range list {
		if scalarEqual(x, v) {
			return true
		}
	}
	return false
}
