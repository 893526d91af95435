package actions

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/resource"
)

// parseDiscovery reads discovery.lua's table: action name to a table with
// disabled, iconClass, displayName and params.
func parseDiscovery(ret any) ([]Action, error) {
	m, ok := ret.(map[string]any)
	if !ok {
		if l, isList := ret.([]any); isList && len(l) == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: discovery returned %s, want a table keyed by action name", ErrInvalidResult, shape(ret))
	}
	var out []Action
	for name, v := range m {
		a := Action{Name: name}
		fields, ok := v.(map[string]any)
		if !ok {
			if l, isList := v.([]any); !isList || len(l) != 0 {
				return nil, fmt.Errorf("%w: discovery entry %q is %s, want a table", ErrInvalidResult, name, shape(v))
			}
		}
		for k, f := range fields {
			var err error
			switch k {
			case "disabled":
				a.Disabled, ok = f.(bool)
			case "iconClass":
				a.IconClass, ok = f.(string)
			case "displayName":
				a.DisplayName, ok = f.(string)
			case "params":
				a.Params, err = parseParams(f)
				ok = err == nil
			default:
				ok = true // Argo CD ignores other fields too
			}
			if err != nil {
				return nil, fmt.Errorf("discovery entry %q: %w", name, err)
			}
			if !ok {
				return nil, fmt.Errorf("%w: discovery entry %q: field %s is %s", ErrInvalidResult, name, k, shape(f))
			}
		}
		out = append(out, a)
	}
	return out, nil
}

func parseParams(v any) ([]Param, error) {
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: params is %s, want a list", ErrInvalidResult, shape(v))
	}
	var out []Param
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: param %d is %s, want a table", ErrInvalidResult, i, shape(e))
		}
		p := Param{Name: scalarString(m["name"]), Type: scalarString(m["type"]), Default: scalarString(m["default"])}
		if p.Name == "" {
			return nil, fmt.Errorf("%w: param %d has no name", ErrInvalidResult, i)
		}
		out = append(out, p)
	}
	return out, nil
}

func scalarString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

func shape(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case map[string]any:
		return "a table of named fields"
	case []any:
		return "a list"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

// buildResult turns an action's return value into impacted resources: a
// returned object is the older form (one patch of live); a list is the
// newer form of {operation, resource} entries.
func buildResult(live *unstructured.Unstructured, ret any) ([]Impacted, error) {
	switch v := ret.(type) {
	case map[string]any:
		if _, isObj := v["kind"]; !isObj {
			return nil, fmt.Errorf("%w: returned a table without kind, want the changed object or a list of impacted resources", ErrInvalidResult)
		}
		im, err := patchOf(live, v)
		if err != nil || im == nil {
			return nil, err
		}
		return []Impacted{*im}, nil
	case []any:
		var out []Impacted
		patched := false
		for i, e := range v {
			entry, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%w: impacted resource %d is %s, want {operation=..., resource=...}", ErrInvalidResult, i+1, shape(e))
			}
			obj, ok := entry["resource"].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%w: impacted resource %d has no resource table", ErrInvalidResult, i+1)
			}
			switch op := Operation(scalarString(entry["operation"])); op {
			case OperationPatch:
				if patched {
					return nil, fmt.Errorf("%w: the source object is patched twice", ErrInvalidResult)
				}
				patched = true
				im, err := patchOf(live, obj)
				if err != nil {
					return nil, err
				}
				if im != nil {
					out = append(out, *im)
				}
			case OperationCreate:
				im, err := createOf(obj)
				if err != nil {
					return nil, fmt.Errorf("impacted resource %d: %w", i+1, err)
				}
				out = append(out, im)
			default:
				return nil, fmt.Errorf("%w: impacted resource %d has operation %q, want create or patch", ErrInvalidResult, i+1, op)
			}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%w: returned %s, want the changed object or a list of impacted resources", ErrInvalidResult, shape(ret))
	}
}

// forbiddenMetadata are fields the API server owns; an action that changes
// one is refused.
var forbiddenMetadata = []string{"uid", "resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"}

// patchOf validates a changed copy of live and computes its patches; nil
// when nothing changed.
func patchOf(live *unstructured.Unstructured, changed map[string]any) (*Impacted, error) {
	restoreEmptyLists(changed, live.Object)
	obj := &unstructured.Unstructured{Object: changed}
	lgv, cgv := live.GroupVersionKind(), obj.GroupVersionKind()
	if lgv.GroupKind() != cgv.GroupKind() || live.GetNamespace() != obj.GetNamespace() || live.GetName() != obj.GetName() {
		return nil, fmt.Errorf("%w: returned %s %s/%s", ErrIdentityChanged, gkString(cgv.GroupKind()), obj.GetNamespace(), obj.GetName())
	}
	lm, _ := live.Object["metadata"].(map[string]any)
	cm, _ := changed["metadata"].(map[string]any)
	for _, f := range forbiddenMetadata {
		if !resource.ValuesEqual(lm[f], cm[f]) {
			return nil, fmt.Errorf("%w: metadata.%s", ErrForbiddenField, f)
		}
	}
	liveBody, changedBody := withoutStatus(live.Object), withoutStatus(changed)
	im := &Impacted{Operation: OperationPatch, Object: obj}
	if p, ok := mergePatch(liveBody, changedBody).(map[string]any); ok && len(p) > 0 {
		if rv := live.GetResourceVersion(); rv != "" {
			md, _ := p["metadata"].(map[string]any)
			if md == nil {
				md = map[string]any{}
				p["metadata"] = md
			}
			md["resourceVersion"] = rv
		}
		im.Patch, _ = json.Marshal(p) // JSON-shaped values always marshal
	}
	if !resource.ValuesEqual(live.Object["status"], changed["status"]) {
		sp := map[string]any{"status": mergePatch(live.Object["status"], changed["status"])}
		im.StatusPatch, _ = json.Marshal(sp)
	}
	if im.Patch == nil && im.StatusPatch == nil {
		return nil, nil
	}
	return im, nil
}

// createOf validates an object to create.
func createOf(m map[string]any) (Impacted, error) {
	obj := &unstructured.Unstructured{Object: m}
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		return Impacted{}, fmt.Errorf("%w: an object to create needs apiVersion and kind", ErrInvalidResult)
	}
	if obj.GetName() == "" && obj.GetGenerateName() == "" {
		return Impacted{}, fmt.Errorf("%w: %s to create has no metadata.name", ErrInvalidResult, gkString(obj.GroupVersionKind().GroupKind()))
	}
	for _, f := range []string{"uid", "resourceVersion"} {
		if md, _ := m["metadata"].(map[string]any); md[f] != nil {
			return Impacted{}, fmt.Errorf("%w: %s to create carries metadata.%s", ErrInvalidResult, obj.GetName(), f)
		}
	}
	return Impacted{Operation: OperationCreate, Object: obj}, nil
}

func gkString(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Group + "/" + gk.Kind
}

func withoutStatus(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != "status" {
			out[k] = v
		}
	}
	return out
}

// restoreEmptyLists turns an empty table the script returned back into an
// empty list where the live object had a list: Lua cannot tell {} from [].
func restoreEmptyLists(changed, live map[string]any) {
	for k, v := range changed {
		switch cv := v.(type) {
		case map[string]any:
			if len(cv) == 0 {
				if _, wasList := live[k].([]any); wasList {
					changed[k] = []any{}
				}
				continue
			}
			if lv, ok := live[k].(map[string]any); ok {
				restoreEmptyLists(cv, lv)
			}
		case []any:
			lv, _ := live[k].([]any)
			for i, e := range cv {
				em, ok := e.(map[string]any)
				if !ok || i >= len(lv) {
					continue
				}
				if lm, ok := lv[i].(map[string]any); ok {
					restoreEmptyLists(em, lm)
				}
			}
		}
	}
}

// mergePatch returns the JSON merge patch (RFC 7386) that turns from into
// to: changed and new keys with their new value, removed keys as null,
// lists replaced whole. Equal values yield an empty map.
func mergePatch(from, to any) any {
	fm, fok := from.(map[string]any)
	tm, tok := to.(map[string]any)
	if !fok || !tok {
		return to
	}
	out := map[string]any{}
	for k, tv := range tm {
		fv, had := fm[k]
		if had && resource.ValuesEqual(fv, tv) {
			continue
		}
		if had {
			if p, ok := mergePatch(fv, tv).(map[string]any); ok {
				if _, isMap := tv.(map[string]any); isMap {
					out[k] = p
					continue
				}
			}
		}
		out[k] = tv
	}
	keys := make([]string, 0, len(fm))
	for k := range fm {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, kept := tm[k]; !kept {
			out[k] = nil
		}
	}
	return out
}
