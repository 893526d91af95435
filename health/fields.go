package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Small readers over unstructured objects. They never fail: a missing or
// mistyped field reads as its zero value, which the checks treat as "not
// reported yet".

func str(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}

// num reads an integer field that JSON may have decoded as int64 or float64.
func num(obj map[string]any, path ...string) (int64, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, path...)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}

func num0(obj map[string]any, path ...string) int64 {
	n, _ := num(obj, path...)
	return n
}

func boolean(obj map[string]any, path ...string) bool {
	b, _, _ := unstructured.NestedBool(obj, path...)
	return b
}

func slice(obj map[string]any, path ...string) []any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	s, _ := v.([]any)
	return s
}

// condition is one entry of status.conditions.
type condition struct {
	Type, Status, Reason, Message string
}

// conditions reads status.conditions.
func conditions(obj map[string]any) []condition {
	var out []condition
	for _, c := range slice(obj, "status", "conditions") {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		out = append(out, condition{Type: str(m, "type"), Status: str(m, "status"), Reason: str(m, "reason"), Message: str(m, "message")})
	}
	return out
}

func findCondition(conds []condition, typ string) (condition, bool) {
	for _, c := range conds {
		if c.Type == typ {
			return c, true
		}
	}
	return condition{}, false
}

// generationBehind reports whether the controller has not yet observed the
// latest spec: status.observedGeneration is set and lower than
// metadata.generation.
func generationBehind(obj map[string]any) bool {
	observed, ok := num(obj, "status", "observedGeneration")
	if !ok {
		return false
	}
	gen, ok := num(obj, "metadata", "generation")
	return ok && observed < gen
}
