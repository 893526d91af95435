package diff

import (
	"slices"
	"strconv"
	"strings"
)

// deepCopyValue copies a JSON-like value: maps and lists are new, scalars
// (immutable) are shared.
func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return deepCopyMap(x)
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = deepCopyValue(c)
		}
		return out
	}
	return v
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, c := range m {
		out[k] = deepCopyValue(c)
	}
	return out
}

// scalarEqual compares two scalars of a normalised object; numbers of
// different Go types compare by value.
func scalarEqual(a, b any) bool {
	switch av := a.(type) {
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case int64:
		switch bv := b.(type) {
		case int64:
			return av == bv
		case float64:
			return float64(av) == bv
		case int:
			return av == int64(bv)
		}
	case float64:
		switch bv := b.(type) {
		case float64:
			return av == bv
		case int64:
			return av == float64(bv)
		case int:
			return av == float64(bv)
		}
	case int:
		return scalarEqual(int64(av), b)
	case nil:
		return b == nil
	}
	return false
}

// ChangeOp is the kind of one change.
type ChangeOp string

const (
	// ChangeAdd: the field is in the predicted live object only.
	ChangeAdd ChangeOp = "add"
	// ChangeRemove: the field is in the live object only.
	ChangeRemove ChangeOp = "remove"
	// ChangeReplace: the field is in both, with different values.
	ChangeReplace ChangeOp = "replace"
)

// Change is one changed field between the live and the predicted live
// object. It carries no values: a Secret's changes show where, never what.
type Change struct {
	// Path is an RFC 6901 JSON pointer, for example "/spec/replicas" or
	// "/spec/template/spec/containers/0/image"; "" is the whole object.
	Path string
	// Op says whether the field is added, removed or replaced.
	Op ChangeOp
}

// compareObjects lists the changes from live to predicted, sorted by path.
// An empty map or list and an absent field are equal, so that a change list
// is empty exactly when the two objects mean the same; the exception is a
// field that root (the kind's type, nil for none) says is a struct, where
// {} is a value (emptyDir: {}). No allocation happens unless a change is
// found.
func compareObjects(live, predicted map[string]any, root *typeNode) []Change {
	// The path lives on the stack unless an object nests deeper than this.
	var path [16]string
	c := comparer{path: path[:0]}
	c.compareMaps(live, predicted, root)
	// Paths are unique: the order is the same as any sort's.
	slices.SortFunc(c.changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return c.changes
}

type comparer struct {
	path    []string
	changes []Change
}

func (c *comparer) add(op ChangeOp) {
	c.changes = append(c.changes, Change{Path: joinPointer(c.path), Op: op})
}

// childNode returns the type of field k of a map or struct node.
func childNode(t *typeNode, k string) *typeNode {
	if t == nil {
		return nil
	}
	switch t.kind {
	case nodeStruct:
		if f := t.fields[k]; f != nil {
			return f.node
		}
	case nodeMap:
		return t.elem
	}
	return nil
}

// absentEqual reports whether v, present on one side only, means the same
// as absence: null, or an empty map or list that is not a struct value.
func absentEqual(v any, t *typeNode) bool {
	if m, ok := v.(map[string]any); ok && len(m) == 0 && t != nil && t.kind == nodeStruct {
		return false
	}
	return isEmptyOrNil(v)
}

func (c *comparer) compareMaps(a, b map[string]any, t *typeNode) {
	for k, av := range a {
		ct := childNode(t, k)
		c.path = append(c.path, k)
		bv, ok := b[k]
		if !ok {
			if !absentEqual(av, ct) {
				c.add(ChangeRemove)
			}
		} else {
			c.compareValues(av, bv, ct)
		}
		c.path = c.path[:len(c.path)-1]
	}
	for k, bv := range b {
		if _, ok := a[k]; ok || absentEqual(bv, childNode(t, k)) {
			continue
		}
		c.path = append(c.path, k)
		c.add(ChangeAdd)
		c.path = c.path[:len(c.path)-1]
	}
}

func (c *comparer) compareValues(a, b any, t *typeNode) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			c.compareMaps(av, bv, t)
			return
		}
		if isEmptyOrNil(av) && isEmptyOrNil(b) {
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			c.compareLists(av, bv, t.elemNode())
			return
		}
		if isEmptyOrNil(av) && isEmptyOrNil(b) {
			return
		}
	default:
		if scalarEqual(a, b) {
			return
		}
		if isEmptyOrNil(a) && isEmptyOrNil(b) {
			return
		}
	}
	c.add(ChangeReplace)
}

func (c *comparer) compareLists(a, b []any, et *typeNode) {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		c.path = append(c.path, strconv.Itoa(i))
		c.compareValues(a[i], b[i], et)
		c.path = c.path[:len(c.path)-1]
	}
	for i := n; i < len(a); i++ {
		c.path = append(c.path, strconv.Itoa(i))
		c.add(ChangeRemove)
		c.path = c.path[:len(c.path)-1]
	}
	for i := n; i < len(b); i++ {
		c.path = append(c.path, strconv.Itoa(i))
		c.add(ChangeAdd)
		c.path = c.path[:len(c.path)-1]
	}
}

func isEmptyOrNil(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// joinPointer writes path tokens as an RFC 6901 JSON pointer.
func joinPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(t))
	}
	return b.String()
}

var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// splitPointer reads an RFC 6901 JSON pointer into tokens.
func splitPointer(p string) ([]string, bool) {
	if p == "" {
		return nil, true
	}
	if p[0] != '/' {
		return nil, false
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = pointerUnescaper.Replace(s)
	}
	return parts, true
}
