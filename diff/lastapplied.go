package diff

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The three-way merge reads the last-applied annotation only to learn which
// fields we applied before: whether a field that live has and desired lacks
// is in it (deleted) or not (kept), and which list items it holds. Decoding
// the annotation into maps and normalising them cost more allocations than
// the rest of a comparison; lastRef answers the same questions from the
// annotation's text instead, normalising on the fly, without building
// anything but one slice of nodes.

// lastRef is a value of the normalised last-applied object: either a value
// of the decoded and normalised object (v), or a node of the annotation's
// text (doc and i) read as normalizeDeclared would leave it. The zero
// lastRef is an absent value (no annotation, or no such field), and
// behaves as a nil map or list.
type lastRef struct {
	v   any
	doc *lastView
	i   int32
	lvl lastLevel
}

// lastLevel says which of normalizeWith's metadata and status rules apply to
// the members of an object node.
type lastLevel uint8

const (
	lvlOther lastLevel = iota
	lvlRoot            // the object: status may be dropped
	lvlMeta            // its metadata: the server's fields are dropped, empty annotations and labels too
	lvlAnns            // its annotations: the last-applied and tracking annotations are dropped
)

// lastView is the parsed text of a last-applied annotation and what its
// normalisation depends on.
type lastView struct {
	nodes      []jnode
	dropAnns   []string
	dropStatus bool
}

// lastAppliedRef returns the root of the normalised last-applied object of
// an object of kind gvk, from the annotation's text raw: absent when raw is
// empty (or JSON null). It reads the text in place when it can (see
// viewLastApplied), and decodes and normalises it otherwise, as it does for
// every annotation with reference set.
func (d *Differ) lastAppliedRef(raw string, gvk schema.GroupVersionKind) (lastRef, error) {
	if raw == "" {
		return lastRef{}, nil
	}
	if !d.norm.reference {
		if r, ok := d.viewLastApplied(raw, gvk); ok {
			return r, nil
		}
	}
	last, err := parseLastApplied(raw)
	if err != nil || last == nil {
		return lastRef{}, err
	}
	d.norm.normalizeDeclared(last)
	return lastRef{v: last}, nil
}

// viewLastApplied reads raw in place. It declines (false) whatever it does
// not reproduce exactly, leaving it to the decoder: text that is not a
// well-formed JSON object, an object with escaped or repeated member names
// or more than lastMaxMembers members, a last-applied object of another
// kind than gvk (it would be normalised with that kind's types), and the
// kinds whose normalisation rewrites more than single fields (Secrets'
// stringData, the per-kind rules, known-type fields).
func (d *Differ) viewLastApplied(raw string, gvk schema.GroupVersionKind) (lastRef, bool) {
	gk := gvk.GroupKind()
	if isSecretGVK(gvk) || d.norm.byKind[gk] != nil || len(d.norm.known[gk]) > 0 {
		return lastRef{}, false
	}
	nodes, ok := parseJSONNodes(raw)
	if !ok {
		return lastRef{}, false
	}
	v := &lastView{nodes: nodes, dropAnns: d.norm.dropAnns, dropStatus: d.norm.dropsStatus(gk)}
	apiVersion, ok1 := v.stringMember(0, "apiVersion")
	kind, ok2 := v.stringMember(0, "kind")
	if !ok1 || !ok2 || schema.FromAPIVersionAndKind(apiVersion, kind) != gvk {
		return lastRef{}, false
	}
	return lastRef{doc: v, lvl: lvlRoot}, true
}

// stringMember returns the member k of object node i as gvkOfMap reads it:
// "" when absent or not a string; false when it cannot tell (an escaped
// string).
func (v *lastView) stringMember(i int32, k string) (string, bool) {
	c := v.member(i, k)
	if c < 0 || v.nodes[c].kind != jString {
		return "", true
	}
	if !v.nodes[c].plain {
		return "", false
	}
	return v.nodes[c].text(), true
}

// exists reports whether r is a value (a present field).
func (r lastRef) exists() bool { return r.v != nil || r.doc != nil }

// object returns r if it is an object, else the absent value.
func (r lastRef) object() lastRef {
	if r.doc != nil {
		if r.doc.nodes[r.i].kind == jObject {
			return r
		}
		return lastRef{}
	}
	if _, ok := r.v.(map[string]any); ok {
		return r
	}
	return lastRef{}
}

// array returns r if it is a list, else the absent value.
func (r lastRef) array() lastRef {
	if r.doc != nil {
		if r.doc.nodes[r.i].kind == jArray {
			return r
		}
		return lastRef{}
	}
	if _, ok := r.v.([]any); ok {
		return r
	}
	return lastRef{}
}

// has reports whether the object r has the field k; t is r's type node.
func (r lastRef) has(k string, t *typeNode) bool {
	if r.doc == nil {
		m, _ := r.v.(map[string]any)
		_, ok := m[k]
		return ok
	}
	return r.field(k, t).exists()
}

// field returns the field k of the object r; t is r's type node.
func (r lastRef) field(k string, t *typeNode) lastRef {
	if r.doc == nil {
		m, _ := r.v.(map[string]any)
		if v := m[k]; v != nil {
			return lastRef{v: v}
		}
		return lastRef{}
	}
	if r.doc.nodes[r.i].kind != jObject {
		return lastRef{}
	}
	c := r.doc.member(r.i, k)
	if c < 0 {
		return lastRef{}
	}
	lvl, ok := r.doc.kept(c, t, r.lvl)
	if !ok {
		return lastRef{}
	}
	return lastRef{doc: r.doc, i: c, lvl: lvl}
}

// item returns the item of the list r whose field key equals want, as
// indexByKey finds it; et is the items' type node.
func (r lastRef) item(key string, want any, et *typeNode) lastRef {
	if want == nil {
		return lastRef{}
	}
	if r.doc == nil {
		list, _ := r.v.([]any)
		if i := indexByKey(list, key, want); i >= 0 {
			return lastRef{v: list[i]}
		}
		return lastRef{}
	}
	n := &r.doc.nodes[r.i]
	if n.kind != jArray {
		return lastRef{}
	}
	kt := childNode(et, key)
	for c := n.first; c >= 0; c = r.doc.nodes[c].next {
		if r.doc.nodes[c].kind != jObject {
			continue
		}
		item := lastRef{doc: r.doc, i: c}
		if f := item.field(key, et); f.exists() && r.doc.matches(f.i, kt, want) {
			return item
		}
	}
	return lastRef{}
}

// containsScalar reports whether the list r holds the scalar v, as
// containsScalar does; et is the items' type node.
func (r lastRef) containsScalar(v any, et *typeNode) bool {
	if r.doc == nil {
		list, _ := r.v.([]any)
		return containsScalar(list, v)
	}
	n := &r.doc.nodes[r.i]
	if n.kind != jArray {
		return false
	}
	for c := n.first; c >= 0; c = r.doc.nodes[c].next {
		if r.doc.matches(c, et, v) {
			return true
		}
	}
	return false
}

// member returns the node of the member k of object node i, or -1.
func (v *lastView) member(i int32, k string) int32 {
	for c := v.nodes[i].first; c >= 0; c = v.nodes[c].next {
		if v.nodes[c].key == k {
			return c
		}
	}
	return -1
}

// kept reports whether normalizeDeclared keeps member c of an object at
// level lvl whose type node is t, and the level of c's own members. The
// rules are normalizeWith's: null members go; at the root, status unless
// it is compared; in metadata, the server's fields, and annotations and
// labels left empty once the dropped annotations are gone; in annotations,
// the dropped ones; anywhere, a field its type marks omitempty whose value
// normalises to an empty map or list.
func (v *lastView) kept(c int32, t *typeNode, lvl lastLevel) (lastLevel, bool) {
	n := &v.nodes[c]
	if n.kind == jNull {
		return 0, false
	}
	child := lvlOther
	switch lvl {
	case lvlRoot:
		if n.key == "status" && v.dropStatus {
			return 0, false
		}
		if n.key == "metadata" {
			child = lvlMeta
		}
	case lvlMeta:
		if isServerMetadata(n.key) {
			return 0, false
		}
		if n.key == "annotations" {
			child = lvlAnns
		}
		if (n.key == "annotations" || n.key == "labels") && n.kind == jObject && !v.anyMember(c, child) {
			return 0, false
		}
	case lvlAnns:
		if slices.Contains(v.dropAnns, n.key) {
			return 0, false
		}
	}
	var f *typeField
	var cn *typeNode
	if t != nil {
		switch t.kind {
		case nodeStruct:
			if f = t.fields[n.key]; f != nil {
				cn = f.node
			}
		case nodeMap:
			cn = t.elem
		}
	}
	if f != nil && f.omitEmpty && v.normalizedEmpty(c, cn, child) {
		return 0, false
	}
	return child, true
}

// anyMember reports whether object node i has a member that the metadata
// rules of level lvl keep (null members count: dropEmpty runs before
// normalizeValue drops them).
func (v *lastView) anyMember(i int32, lvl lastLevel) bool {
	for c := v.nodes[i].first; c >= 0; c = v.nodes[c].next {
		if lvl == lvlAnns && slices.Contains(v.dropAnns, v.nodes[c].key) {
			continue
		}
		return true
	}
	return false
}

// normalizedEmpty reports whether node i, of type node t at level lvl,
// normalises to an empty map or list.
func (v *lastView) normalizedEmpty(i int32, t *typeNode, lvl lastLevel) bool {
	n := &v.nodes[i]
	switch n.kind {
	case jArray:
		return n.count == 0
	case jObject:
		for c := n.first; c >= 0; c = v.nodes[c].next {
			if _, ok := v.kept(c, t, lvl); ok {
				return false
			}
		}
		return true
	}
	return false
}

// matches reports whether node i, normalised as a value of type node t,
// is scalarEqual to want. The common cases (a plain string, a number, a
// boolean) compare without building the value.
func (v *lastView) matches(i int32, t *typeNode, want any) bool {
	n := &v.nodes[i]
	special := t != nil && (t.kind == nodeQuantity || t.kind == nodeIntOrString)
	switch n.kind {
	case jObject, jArray:
		return false
	case jNull:
		return want == nil
	case jTrue:
		return scalarEqual(true, want)
	case jFalse:
		return scalarEqual(false, want)
	case jString:
		if n.plain && !special {
			s, ok := want.(string)
			return ok && s == n.text()
		}
	case jNumber:
		if t == nil || t.kind != nodeQuantity {
			f, _ := strconv.ParseFloat(n.raw, 64)
			if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return scalarEqual(int64(f), want)
			}
			return scalarEqual(f, want)
		}
	}
	return scalarEqual(normalizeValue(v.value(i), t, false), want)
}

// value decodes scalar node i as encoding/json does.
func (v *lastView) value(i int32) any {
	n := &v.nodes[i]
	switch n.kind {
	case jTrue:
		return true
	case jFalse:
		return false
	case jNumber:
		f, _ := strconv.ParseFloat(n.raw, 64)
		return f
	case jString:
		if n.plain {
			return n.text()
		}
		var s string
		_ = json.Unmarshal([]byte(n.raw), &s)
		return s
	}
	return nil
}
