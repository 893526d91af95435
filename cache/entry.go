package cache

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegitops/gitops/resource"
)

// owner is the part of an ownerReference the tree needs.
type owner struct {
	UID        types.UID
	APIVersion string
	Kind       string
	Name       string
	Controller bool
}

// entry is what the cache holds for one object: always its identity and the
// fields the indexes need, and the whole (trimmed) object only when the
// populate hook asked for it, as its JSON. A lean entry costs a few hundred
// bytes; a whole one adds its JSON, a third to a quarter of what the same
// object costs decoded (maps of interfaces), and each reader decodes its
// own copy.
type entry struct {
	key             resource.Key
	apiVersion      string
	uid             types.UID
	resourceVersion string
	// labels holds key, value, key, value, ... sorted by key: a slice
	// costs a tenth of a small map.
	labels []string
	owners []owner
	app    string
	info   any
	// inferred is what few kinds have (StatefulSets, PVCs, Endpoints):
	// nil for most objects. Kept apart so that an entry is 224 bytes, a
	// size class of its own: at 264 bytes entries shared the 288-byte
	// spans of decoded maps' groups, and each long-lived entry kept a span
	// of the cold start's decoding churn in use (BENCHMARKS.md).
	inferred *inferred
	// raw is the whole object's JSON, or nil for a lean entry.
	raw []byte
}

// inferred is an entry's part for parents without ownerReferences.
type inferred struct {
	// claimTemplates are a StatefulSet's volumeClaimTemplate names, for
	// the inferred PVC -> StatefulSet parent.
	claimTemplates []string
	// parents are parents this object names without an ownerReference
	// (Endpoints -> Service, PVC -> StatefulSet candidates), with the
	// claim template each candidate needs ("" for none).
	parents []inferredParent
}

// claimTemplates are the entry's StatefulSet claim template names.
func (e *entry) claimTemplates() []string {
	if e.inferred == nil {
		return nil
	}
	return e.inferred.claimTemplates
}

// inferredParents are the parents the entry's object names without an
// ownerReference.
func (e *entry) inferredParents() []inferredParent {
	if e.inferred == nil {
		return nil
	}
	return e.inferred.parents
}

type inferredParent struct {
	parent   resource.Key
	template string
}

// trim removes what the cache never needs from obj, in place: every
// managedFields entry unless keepManagedFields, except those of the
// managers in keepManagersOf; the last-applied annotation unless
// keepLastApplied.
func trim(obj *unstructured.Unstructured, keepManagedFields bool, keepManagersOf []string, keepLastApplied bool) {
	meta, ok := obj.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	if !keepManagedFields {
		keepOnlyManagers(meta, keepManagersOf)
	}
	if !keepLastApplied {
		if ann, ok := meta["annotations"].(map[string]any); ok {
			delete(ann, resource.AnnotationLastApplied)
			if len(ann) == 0 {
				delete(meta, "annotations")
			}
		}
	}
}

// keepOnlyManagers drops the managedFields entries of every manager not in
// keep (all of them when keep is empty).
func keepOnlyManagers(meta map[string]any, keep []string) {
	entries, _ := meta["managedFields"].([]any)
	var kept []any
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if name, _ := m["manager"].(string); name != "" && slices.Contains(keep, name) {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		delete(meta, "managedFields")
		return
	}
	meta["managedFields"] = kept
}

// newEntry builds the entry for obj (already trimmed). A whole object that
// cannot be encoded again (it came from JSON, so it always can) is kept
// lean rather than lost.
func newEntry(obj *unstructured.Unstructured, app string, info any, keepWhole bool) *entry {
	key := resource.KeyOf(obj)
	// Group, kind, namespace and apiVersion repeat across thousands of
	// objects: keep one copy of each.
	key.Group, key.Kind, key.Namespace = intern(key.Group), intern(key.Kind), intern(key.Namespace)
	e := &entry{
		key:             key,
		apiVersion:      intern(obj.GetAPIVersion()),
		uid:             obj.GetUID(),
		resourceVersion: obj.GetResourceVersion(),
		app:             intern(app),
		info:            info,
	}
	if l := obj.GetLabels(); len(l) > 0 {
		keys := make([]string, 0, len(l))
		for k := range l {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		e.labels = make([]string, 0, 2*len(l))
		for _, k := range keys {
			e.labels = append(e.labels, intern(k), intern(l[k]))
		}
	}
	if refs := obj.GetOwnerReferences(); len(refs) > 0 {
		e.owners = make([]owner, len(refs))
		for i, r := range refs {
			e.owners[i] = owner{UID: r.UID, APIVersion: intern(r.APIVersion), Kind: intern(r.Kind), Name: r.Name, Controller: r.Controller != nil && *r.Controller}
		}
	}
	e.packStrings()
	if claims, parents := inferParents(obj, e.key); len(claims) > 0 || len(parents) > 0 {
		e.inferred = &inferred{claimTemplates: claims, parents: parents}
	}
	if keepWhole {
		if raw, err := json.Marshal(obj.Object); err == nil {
			e.raw = raw
		}
	}
	return e
}

// packStrings puts the strings the entry keeps of its own (its name and
// uid, its owners' uids and names) in one allocation. The decoder gave
// each its own small one (a uid is 48 bytes), among the decoded object's
// many that are freed right after: kept, each would hold a span of that
// churn in use (BENCHMARKS.md, "Where the heap in use goes").
func (e *entry) packStrings() {
	n := len(e.key.Name) + len(e.uid)
	for _, o := range e.owners {
		n += len(o.UID) + len(o.Name)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(e.key.Name)
	b.WriteString(string(e.uid))
	for _, o := range e.owners {
		b.WriteString(string(o.UID))
		b.WriteString(o.Name)
	}
	all := b.String()
	next := func(s string) string {
		out := all[:len(s)]
		all = all[len(s):]
		return out
	}
	e.key.Name = next(e.key.Name)
	e.uid = types.UID(next(string(e.uid)))
	for i := range e.owners {
		e.owners[i].UID = types.UID(next(string(e.owners[i].UID)))
		e.owners[i].Name = next(e.owners[i].Name)
	}
}

// adopt shares old's strings where an update of the same object left them
// equal, so that the entry keeps those of the object's first version and
// each update's are freed with the rest of its decode.
func (e *entry) adopt(old *entry) {
	if old.uid != e.uid {
		return // recreated under the same name
	}
	e.key.Name, e.uid = old.key.Name, old.uid
	if slices.Equal(e.owners, old.owners) {
		e.owners = old.owners
	}
}

// whole reports whether the entry keeps the whole object.
func (e *entry) whole() bool { return e.raw != nil }

// object returns a new copy of the whole object, or for a lean entry a new
// object holding apiVersion, kind and the metadata the cache keeps (name,
// namespace, uid, resourceVersion, labels, ownerReferences). Each call
// decodes its own copy: the caller may keep or modify it. The entry's
// fields never change once it is stored, so object needs no lock.
func (e *entry) object() *unstructured.Unstructured {
	if e.raw != nil {
		if obj, err := decodeWhole(e.raw); err == nil {
			return obj
		}
		// Unreachable: raw was encoded from a decoded object. The
		// stand-in below is still a truthful (lean) answer.
	}
	return e.lean()
}

// lean builds the stand-in of a lean entry.
func (e *entry) lean() *unstructured.Unstructured {
	meta := map[string]any{"name": e.key.Name}
	if e.key.Namespace != "" {
		meta["namespace"] = e.key.Namespace
	}
	if e.uid != "" {
		meta["uid"] = string(e.uid)
	}
	if e.resourceVersion != "" {
		meta["resourceVersion"] = e.resourceVersion
	}
	if len(e.labels) > 0 {
		l := make(map[string]any, len(e.labels)/2)
		for i := 0; i+1 < len(e.labels); i += 2 {
			l[e.labels[i]] = e.labels[i+1]
		}
		meta["labels"] = l
	}
	if len(e.owners) > 0 {
		refs := make([]any, len(e.owners))
		for i, o := range e.owners {
			r := map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "name": o.Name, "uid": string(o.UID)}
			if o.Controller {
				r["controller"] = true
			}
			refs[i] = r
		}
		meta["ownerReferences"] = refs
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": e.apiVersion,
		"kind":       e.key.Kind,
		"metadata":   meta,
	}}
}

// intern returns the canonical copy of s, so that equal strings held by
// many entries share one allocation.
func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}
