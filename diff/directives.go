package diff

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/resource"
)

// Strategic-merge patch directives a manifest may carry.
const (
	directivePatch          = "$patch"
	directiveRetainKeys     = "$retainKeys"
	directiveSetOrder       = "$setElementOrder/"
	directiveDeleteFromList = "$deleteFromPrimitiveList/"
)

// DirectiveError reports a strategic-merge directive in a desired object
// that is not resolved: $patch: replace, $retainKeys,
// $deleteFromPrimitiveList, an unknown $patch value, or any directive in a
// kind that is not built in (custom resources are not merged
// strategically). Nothing of the app is written.
type DirectiveError struct {
	// Key is the object.
	Key resource.Key
	// Path is where the directive is, as a JSON pointer.
	Path string
	// Directive is the directive as written ("$patch: replace").
	Directive string
	// Reason says why it is refused.
	Reason string
}

// Error implements error.
func (e *DirectiveError) Error() string {
	return fmt.Sprintf("%s: %s: strategic-merge directive %s is not supported: %s", e.Key, e.Path, e.Directive, e.Reason)
}

// DirectiveResolver resolves the strategic-merge directives of desired
// objects into the plain object they describe, the form every comparison
// and apply needs. Build one with NewDirectiveResolver and keep it; it is
// safe for concurrent use.
type DirectiveResolver struct {
	trees *typeTrees
}

// NewDirectiveResolver returns a DirectiveResolver for the built-in kinds
// of client-go's scheme.
func NewDirectiveResolver() *DirectiveResolver {
	return &DirectiveResolver{trees: newTypeTrees()}
}

// Resolve returns obj with its directives resolved, or obj itself when it
// has none (obj is never modified):
//
//   - $patch: merge is the default and is dropped;
//   - $patch: delete removes the list item or the field that holds it;
//   - $setElementOrder/<list> orders the list (items by their merge key,
//     the others after them in their order) and is dropped.
//
// Directives are read where strategic merge reads them, in the fields of
// built-in kinds (not inside maps of user data such as a ConfigMap's). Any
// other directive, and any directive in a kind that is not built in, is a
// *DirectiveError.
func (r *DirectiveResolver) Resolve(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !hasDirective(obj.Object) {
		return obj, nil
	}
	key := resource.KeyOf(obj)
	root := r.trees.forGVK(obj.GroupVersionKind())
	if root == nil {
		path, directive := firstDirective(obj.Object, "")
		return nil, &DirectiveError{Key: key, Path: path, Directive: directive,
			Reason: "strategic merge applies to built-in kinds; " + key.GroupKind().String() + " is merged as JSON"}
	}
	out := deepCopyMap(obj.Object)
	del, err := resolveMap(key, out, root, "")
	if err != nil {
		return nil, err
	}
	if del {
		return nil, &DirectiveError{Key: key, Path: "/", Directive: directivePatch + ": delete",
			Reason: "an object cannot delete itself; remove it from the manifests (pruning deletes it)"}
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// isDirective reports a key strategic merge reads as a directive.
func isDirective(k string) bool {
	return k == directivePatch || k == directiveRetainKeys ||
		strings.HasPrefix(k, directiveSetOrder) || strings.HasPrefix(k, directiveDeleteFromList)
}

// hasDirective reports whether v holds a directive key anywhere.
func hasDirective(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if isDirective(k) || hasDirective(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasDirective(x) {
				return true
			}
		}
	}
	return false
}

// firstDirective returns the path and text of a directive in v.
func firstDirective(v any, path string) (string, string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if isDirective(k) {
				return path, directiveText(k, x)
			}
			if p, d := firstDirective(x, path+"/"+escapePointer(k)); d != "" {
				return p, d
			}
		}
	case []any:
		for i, x := range v {
			if p, d := firstDirective(x, path+"/"+strconv.Itoa(i)); d != "" {
				return p, d
			}
		}
	}
	return "", ""
}

func directiveText(k string, v any) string {
	if s, ok := v.(string); ok {
		return k + ": " + s
	}
	return k
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// resolveMap resolves the directives of m, a value of type t. It reports
// whether m is to be deleted ($patch: delete).
func resolveMap(key resource.Key, m map[string]any, t *typeNode, path string) (deleteMe bool, err error) {
	refuse := func(directive, reason string) error {
		return &DirectiveError{Key: key, Path: pathOr(path), Directive: directive, Reason: reason}
	}
	switch {
	case t == nil || t.kind == nodeAny || t.kind == nodeScalar:
		// No strategic merge here (raw extensions, unknown shapes).
		return false, nil
	case t.kind == nodeMap:
		// Keys are data; the values may be structs.
		for k, v := range m {
			if err := resolveValue(key, m, k, v, t.elem, nil, path+"/"+escapePointer(k)); err != nil {
				return false, err
			}
		}
		return false, nil
	case t.kind != nodeStruct:
		return false, nil
	}
	if v, ok := m[directivePatch]; ok {
		switch v {
		case "merge":
			delete(m, directivePatch)
		case "delete":
			return true, nil
		case "replace":
			return false, refuse(directiveText(directivePatch, v), "a replaced value would drop the live fields the manifest does not list; write the whole value without it")
		default:
			return false, refuse(directiveText(directivePatch, v), "unknown $patch value")
		}
	}
	if _, ok := m[directiveRetainKeys]; ok {
		return false, refuse(directiveRetainKeys, "the fields to keep are the ones the manifest sets; remove it")
	}
	for k, v := range m {
		switch {
		case strings.HasPrefix(k, directiveDeleteFromList):
			return false, refuse(k, "list the values to keep instead")
		case strings.HasPrefix(k, directiveSetOrder):
			field := strings.TrimPrefix(k, directiveSetOrder)
			order, ok := v.([]any)
			f := t.fields[field]
			if !ok || f == nil {
				return false, refuse(k, "it names no list field of "+key.GroupKind().String())
			}
			if list, ok := m[field].([]any); ok {
				m[field] = orderList(list, order, f.mergeKey)
			}
			delete(m, k)
		}
	}
	for k, v := range m {
		f := t.fields[k]
		if f == nil {
			continue
		}
		if err := resolveValue(key, m, k, v, f.node, f, path+"/"+escapePointer(k)); err != nil {
			return false, err
		}
	}
	return false, nil
}

// resolveValue resolves parent[k] = v of type t (field f, or nil in a map).
func resolveValue(key resource.Key, parent map[string]any, k string, v any, t *typeNode, f *typeField, path string) error {
	switch v := v.(type) {
	case map[string]any:
		del, err := resolveMap(key, v, t, path)
		if err != nil {
			return err
		}
		if del {
			delete(parent, k)
		}
	case []any:
		if t == nil || t.kind != nodeSlice {
			return nil
		}
		kept := v[:0:0]
		for i, item := range v {
			if im, ok := item.(map[string]any); ok {
				del, err := resolveMap(key, im, t.elem, path+"/"+strconv.Itoa(i))
				if err != nil {
					return err
				}
				if del {
					continue
				}
			}
			kept = append(kept, item)
		}
		parent[k] = kept
	}
	return nil
}

// orderList orders list by order: items named in order first, in its
// order (maps matched by mergeKey, scalars by value), the rest after them.
func orderList(list, order []any, mergeKey string) []any {
	id := func(v any) any {
		if m, ok := v.(map[string]any); ok && mergeKey != "" {
			return fmt.Sprint(m[mergeKey])
		}
		return fmt.Sprint(v)
	}
	used := make([]bool, len(list))
	out := make([]any, 0, len(list))
	for _, o := range order {
		want := id(o)
		for i, item := range list {
			if !used[i] && id(item) == want {
				used[i] = true
				out = append(out, item)
				break
			}
		}
	}
	for i, item := range list {
		if !used[i] {
			out = append(out, item)
		}
	}
	return out
}

func pathOr(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
