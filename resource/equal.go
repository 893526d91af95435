package resource

import (
	"encoding/json"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// ValuesEqual reports whether two JSON-shaped values (maps of strings,
// slices, strings, bools, nil and numbers) are equal: maps key by key,
// lists item by item, numbers by value whatever their Go type (int, int32,
// int64, float64 or json.Number), so a live object's int64 equals the
// float64 a script or a JSON decoder wrote for the same number.
func ValuesEqual(a, b any) bool {
	if an, ok := Number(a); ok {
		bn, ok := Number(b)
		return ok && an == bn
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, v := range av {
			w, ok := bv[k]
			if !ok || !ValuesEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !ValuesEqual(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// Number is v as a float64 when v is a number of a JSON-shaped value (int,
// int32, int64, float64 or json.Number).
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// ObjectsEqual reports whether two typed API objects (pointers to structs)
// are equal as the API server stores them: each converted by
// runtime.DefaultUnstructuredConverter (empty omitempty fields left out,
// times at the second precision of their JSON form), then ValuesEqual. A
// value the converter refuses equals nothing.
func ObjectsEqual(a, b any) bool {
	ua, errA := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	ub, errB := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	return errA == nil && errB == nil && ValuesEqual(ua, ub)
}
