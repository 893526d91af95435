package resource

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValuesEqual(t *testing.T) {
	cases := []struct {
		a, b any
		want bool
	}{
		{int64(2), float64(2), true},
		{int(2), json.Number("2"), true},
		{int32(2), float64(2.5), false},
		{"2", int64(2), false},
		{nil, nil, true},
		{nil, map[string]any{}, false},
		{map[string]any{"a": []any{int64(1), "x"}}, map[string]any{"a": []any{float64(1), "x"}}, true},
		{map[string]any{"a": int64(1)}, map[string]any{"b": int64(1)}, false},
		{map[string]any{"a": int64(1)}, map[string]any{"a": int64(1), "b": nil}, false},
		{[]any{true}, []any{true, true}, false},
		{[]any{"a"}, []any{"b"}, false},
	}
	for _, c := range cases {
		if got := ValuesEqual(c.a, c.b); got != c.want {
			t.Errorf("ValuesEqual(%#v, %#v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := ValuesEqual(c.b, c.a); got != c.want {
			t.Errorf("ValuesEqual(%#v, %#v) = %v, want %v (reversed)", c.b, c.a, got, c.want)
		}
	}
}

// Typed objects compare as the API server stores them: an empty list
// equals a missing one, times to the second.
func TestObjectsEqual(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := metav1.ObjectMeta{Name: "x", CreationTimestamp: metav1.NewTime(t0), Finalizers: []string{}}
	b := metav1.ObjectMeta{Name: "x", CreationTimestamp: metav1.NewTime(t0.Add(300 * time.Millisecond))}
	if !ObjectsEqual(&a, &b) {
		t.Error("an empty list and sub-second times made a difference")
	}
	b.Labels = map[string]string{"k": "v"}
	if ObjectsEqual(&a, &b) {
		t.Error("a label made no difference")
	}
	if ObjectsEqual(a, b) {
		t.Error("values the converter refuses (not pointers) compared equal")
	}
}
