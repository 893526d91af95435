package diff

import (
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
)

// nodeKind says how the normaliser and the three-way merge treat a value.
type nodeKind uint8

const (
	nodeAny         nodeKind = iota // no type information: generic rules only
	nodeStruct                      // a Go struct: known JSON fields
	nodeMap                         // a Go map: string keys, elem values
	nodeSlice                       // a Go slice: elem items
	nodeQuantity                    // resource.Quantity
	nodeIntOrString                 // intstr.IntOrString
	nodeScalar                      // string, number, bool, time
)

// typeNode describes one Go type of k8s.io/api as seen through JSON. Nodes
// are built once per Go type and shared; they are read-only once built.
type typeNode struct {
	kind   nodeKind
	fields map[string]*typeField // nodeStruct
	elem   *typeNode             // nodeMap, nodeSlice
	// defaults fills the server's defaults into an object of this type
	// where they are absent (see defaults.go); nil when there are none.
	defaults func(m map[string]any)
}

// typeField is one JSON field of a struct: its type and the tags that
// matter to merging and to empty-value handling.
type typeField struct {
	node *typeNode
	// omitEmpty: a Go map or slice field tagged omitempty: the server never
	// stores it empty. (An empty struct, such as emptyDir: {}, is a value
	// and is kept.)
	omitEmpty bool
	// mergeKey and merge: strategic-merge-patch list semantics
	// (patchStrategy "merge", patchMergeKey).
	mergeKey string
	merge    bool
	// retainKeys: a map (union) whose keys absent from desired are dropped.
	retainKeys bool
}

var (
	quantityType    = reflect.TypeOf(resource.Quantity{})
	intOrStringType = reflect.TypeOf(intstr.IntOrString{})
	timeType        = reflect.TypeOf(metav1.Time{})
	microTimeType   = reflect.TypeOf(metav1.MicroTime{})
	durationType    = reflect.TypeOf(metav1.Duration{})
	rawExtType      = reflect.TypeOf(runtime.RawExtension{})
)

// typeTrees builds and caches the type nodes of the built-in kinds, from
// the typed scheme of k8s.io/api (client-go's scheme). It belongs to one
// Differ, or to a TypeCache Differs share: no package-level state.
type typeTrees struct {
	scheme *runtime.Scheme

	mu     sync.Mutex
	byType map[reflect.Type]*typeNode
	// named are the scheme's struct types by Argo CD's type names (see
	// knownType), built on first use.
	named map[string]reflect.Type
	byGVK sync.Map // schema.GroupVersionKind -> *typeNode (nil: not built in)
}

// TypeCache holds the type trees of the built-in kinds (from client-go's
// typed scheme) that Differs build on first use of each kind; it is safe
// for concurrent use and may be shared by any number of Differs
// (Options.Types). The trees never change once built.
type TypeCache struct{ trees *typeTrees }

// NewTypeCache returns an empty TypeCache.
func NewTypeCache() *TypeCache { return &TypeCache{trees: newTypeTrees()} }

func newTypeTrees() *typeTrees {
	return &typeTrees{scheme: scheme.Scheme, byType: map[reflect.Type]*typeNode{}}
}

// forGVK returns the node of the built-in kind gvk, or nil for kinds the
// typed scheme does not know (custom resources).
func (t *typeTrees) forGVK(gvk schema.GroupVersionKind) *typeNode {
	if v, ok := t.byGVK.Load(gvk); ok {
		return v.(*typeNode)
	}
	var n *typeNode
	if typ, ok := t.scheme.AllKnownTypes()[gvk]; ok && gvk.Kind != "" && !strings.HasSuffix(gvk.Kind, "List") {
		t.mu.Lock()
		n = t.build(typ)
		t.mu.Unlock()
	}
	t.byGVK.Store(gvk, n)
	return n
}

// build returns the node of typ; callers hold t.mu. Nodes are registered
// before their fields are filled, so recursive types terminate.
func (t *typeTrees) build(typ reflect.Type) *typeNode {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if n, ok := t.byType[typ]; ok {
		return n
	}
	n := &typeNode{}
	t.byType[typ] = n
	switch {
	case typ == quantityType:
		n.kind = nodeQuantity
		return n
	case typ == intOrStringType:
		n.kind = nodeIntOrString
		return n
	case typ == timeType, typ == microTimeType, typ == durationType:
		n.kind = nodeScalar
		return n
	case typ == rawExtType:
		n.kind = nodeAny
		return n
	}
	switch typ.Kind() {
	case reflect.Struct:
		n.kind = nodeStruct
		n.fields = map[string]*typeField{}
		t.addFields(n, typ)
		n.defaults = defaultsFor(typ)
	case reflect.Map:
		n.kind = nodeMap
		n.elem = t.build(typ.Elem())
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 {
			n.kind = nodeScalar // []byte: base64 text
			return n
		}
		n.kind = nodeSlice
		n.elem = t.build(typ.Elem())
	case reflect.Interface:
		n.kind = nodeAny
	default:
		n.kind = nodeScalar
	}
	return n
}

func (t *typeTrees) addFields(n *typeNode, typ reflect.Type) {
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				t.addFields(n, ft)
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		strategy := f.Tag.Get("patchStrategy")
		n.fields[name] = &typeField{
			node:       t.build(f.Type),
			omitEmpty:  (f.Type.Kind() == reflect.Map || f.Type.Kind() == reflect.Slice) && (strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")),
			mergeKey:   f.Tag.Get("patchMergeKey"),
			merge:      strings.Contains(strategy, "merge"),
			retainKeys: strings.Contains(strategy, "retainKeys"),
		}
	}
}

// child returns the field named name of a struct node, or nil.
func (n *typeNode) child(name string) *typeField {
	if n == nil || n.kind != nodeStruct {
		return nil
	}
	return n.fields[name]
}

// elemNode returns the node of a map's values or a slice's items, or nil.
func (n *typeNode) elemNode() *typeNode {
	if n == nil {
		return nil
	}
	return n.elem
}
