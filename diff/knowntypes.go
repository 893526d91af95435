package diff

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// KnownTypeField says that a field of a kind (usually a custom resource)
// holds a built-in Kubernetes type, so that it is normalised as that type
// is in built-in kinds: quantities in canonical form ("1000m" is "1"),
// int-or-string digits as integers, fields the server omits when empty
// dropped, the server's defaults filled (Argo CD's
// resource.customizations.knownTypeFields).
type KnownTypeField struct {
	// Group and Kind select the objects ("" is the core group).
	Group, Kind string
	// Field is the dotted path of the field, for example
	// "spec.jobTemplate.spec.template.spec".
	Field string
	// Type names the built-in type as Argo CD does: "<group>/<version>/
	// <Type>" of k8s.io/api ("core/v1/PodSpec", "apps/v1/DeploymentSpec"),
	// "meta/v1/<Type>" of apimachinery's meta/v1, or "resource/Quantity".
	Type string
}

// knownTypes resolves Argo CD type names to the Go types of the typed
// scheme, found by walking every kind the scheme knows.
func (t *typeTrees) knownType(name string) (reflect.Type, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.named == nil {
		t.named = map[string]reflect.Type{"resource/Quantity": reflect.TypeOf(resource.Quantity{})}
		seen := map[reflect.Type]bool{}
		for _, typ := range t.scheme.AllKnownTypes() {
			collectNamed(typ, seen, t.named)
		}
	}
	typ, ok := t.named[name]
	return typ, ok
}

// collectNamed records typ and the struct types it holds under their
// Argo CD names.
func collectNamed(typ reflect.Type, seen map[reflect.Type]bool, out map[string]reflect.Type) {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct || seen[typ] {
		return
	}
	seen[typ] = true
	if name := argoTypeName(typ); name != "" {
		out[name] = typ
	}
	for i := 0; i < typ.NumField(); i++ {
		collectNamed(typ.Field(i).Type, seen, out)
	}
}

// argoTypeName is "<group>/<version>/<Type>" for k8s.io/api/<group>/
// <version>, "meta/v1/<Type>" for apimachinery's meta/v1; "" otherwise.
func argoTypeName(typ reflect.Type) string {
	pkg := typ.PkgPath()
	switch {
	case strings.HasPrefix(pkg, "k8s.io/api/"):
		return strings.TrimPrefix(pkg, "k8s.io/api/") + "/" + typ.Name()
	case pkg == "k8s.io/apimachinery/pkg/apis/meta/v1":
		return "meta/v1/" + typ.Name()
	}
	return ""
}

// knownFields are the compiled KnownTypeFields, by kind.
type knownFields map[schema.GroupKind][]knownField

type knownField struct {
	path []string
	node *typeNode
	name string
}

// compileKnownTypes resolves every KnownTypeField's type; an unknown type
// is an error naming the field and the type.
func compileKnownTypes(trees *typeTrees, fields []KnownTypeField) (knownFields, error) {
	out := knownFields{}
	for _, f := range fields {
		typ, ok := trees.knownType(f.Type)
		if !ok {
			return nil, fmt.Errorf("knownTypeFields: %s %s field %s: unknown type %q (want for example core/v1/PodSpec)", f.Group, f.Kind, f.Field, f.Type)
		}
		if f.Field == "" {
			return nil, fmt.Errorf("knownTypeFields: %s %s: a field is required", f.Group, f.Kind)
		}
		trees.mu.Lock()
		node := trees.build(typ)
		trees.mu.Unlock()
		gk := schema.GroupKind{Group: f.Group, Kind: f.Kind}
		out[gk] = append(out[gk], knownField{path: strings.Split(f.Field, "."), node: node, name: f.Type})
	}
	return out, nil
}

// apply normalises the known-type fields of obj in place, with the
// server's defaults when defaults is set (stored objects only).
func (k knownFields) apply(obj map[string]any, gk schema.GroupKind, defaults bool) {
	for _, f := range k[gk] {
		parent := obj
		for _, p := range f.path[:len(f.path)-1] {
			next, ok := parent[p].(map[string]any)
			if !ok {
				parent = nil
				break
			}
			parent = next
		}
		if parent == nil {
			continue
		}
		last := f.path[len(f.path)-1]
		if v, ok := parent[last]; ok && v != nil {
			parent[last] = normalizeValue(v, f.node, defaults)
		}
	}
}
