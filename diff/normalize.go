package diff

import (
	"encoding/base64"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	gresource "github.com/kubegitops/gitops/resource"
)

// serverMetadata are the metadata fields the API server owns: they never
// take part in a comparison and are never written.
var serverMetadata = [...]string{
	"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
	"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds",
}

// normalizer is the one normalisation pipeline. Sync status, display and the
// patch sync writes all come from objects that went through it, so the
// three can never disagree.
type normalizer struct {
	trees         *typeTrees
	known         knownFields
	dropAnns      []string
	compareStatus map[schema.GroupKind]bool
	// compareAllStatus compares every kind's status but ignoreStatus's.
	compareAllStatus bool
	ignoreStatus     map[schema.GroupKind]bool
	// byKind are the per-kind rules (RBAC, Endpoints; see kinds.go).
	byKind map[schema.GroupKind]kindNormalizer
	// reference makes the Differ take the straightforward form of every
	// fast path (deep copy then normalise, decode the last-applied
	// annotation): tests compare the two.
	reference bool
}

func newNormalizer(trees *typeTrees, opts Options) *normalizer {
	n := &normalizer{
		trees: trees,
		dropAnns: []string{
			gresource.AnnotationLastApplied,
			opts.Tracking.AnnotationKey,
			opts.Tracking.InstanceAnnotationKey,
		},
		compareStatus: map[schema.GroupKind]bool{},
		byKind:        kindNormalizers(opts),
	}
	for _, gk := range opts.CompareStatus {
		n.compareStatus[gk] = true
	}
	n.compareAllStatus = opts.CompareAllStatus
	n.ignoreStatus = map[schema.GroupKind]bool{}
	for _, gk := range opts.IgnoreStatus {
		n.ignoreStatus[gk] = true
	}
	return n
}

// normalize rewrites obj, a private deep copy, in place. The rules, in
// order:
//
//  1. metadata the server populates (uid, resourceVersion, generation,
//     creationTimestamp, managedFields, selfLink, deletion fields) is
//     dropped, as are the last-applied and tracking annotations and empty
//     labels and annotations;
//  2. status is dropped unless its kind is listed in Options.CompareStatus,
//     or Options.CompareAllStatus is set and the kind is not in
//     Options.IgnoreStatus;
//  3. a core Secret's stringData is folded into data (base64), and null
//     data values become "";
//  4. null values are dropped (null and absent are the same);
//  5. numbers with an integral value become int64 (1.0 and 1 are equal);
//  6. for built-in kinds, guided by the Go types of k8s.io/api: quantities
//     take their canonical form (0.5 and 500m are equal), int-or-string
//     values that are decimal digits become integers, empty maps and lists
//     in fields the server omits when empty are dropped, and the server's
//     known defaults fill absent fields (ports' protocol TCP, a container's
//     termination message path and pull policy, a Deployment's strategy,
//     ...; see defaults.go);
//  7. fields Options.KnownTypeFields names are normalised as their
//     built-in type, the same way, in any kind;
//  8. the per-kind rules of kinds.go: an empty rules list of a Role or
//     ClusterRole is none, an aggregated ClusterRole's rules are dropped
//     with Options.IgnoreAggregatedRoles, and an Endpoints' ports default
//     to TCP and its subsets, addresses and ports are sorted.
//
// Defaults belong to stored objects only (live, and the predicted result of
// a merge): see normalizeDeclared for desired and last-applied objects.
func (n *normalizer) normalize(obj map[string]any) { n.normalizeWith(obj, true) }

// normalizeDeclared is normalize without rule 6's server defaults: the form
// of an object as an applier sends it (desired, a last-applied annotation).
// The server defaults only the fields a write leaves absent, after it has
// merged what was sent into what it stores; defaulting the declared object
// before a merge would let a default overwrite a live value the object does
// not set (a pull policy derived from an old image, an updateStrategy
// another manager chose), predicting a change no sync makes.
func (n *normalizer) normalizeDeclared(obj map[string]any) { n.normalizeWith(obj, false) }

// normalizedCopy returns a normalised deep copy of obj, which is not
// modified: normalize (defaults set) or normalizeDeclared (not set) of a
// copy. What rules 1 and 2 drop (managedFields and the rest of the
// server's metadata, the last-applied and tracking annotations, status
// when it is not compared) is never copied: a live object's managedFields
// alone hold more maps than its spec.
func (n *normalizer) normalizedCopy(obj map[string]any, defaults bool) map[string]any {
	if obj == nil {
		return nil
	}
	if n.reference {
		out := deepCopyMap(obj)
		n.normalizeWith(out, defaults)
		return out
	}
	dropStatus := n.dropsStatus(gvkOfMap(obj).GroupKind())
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		switch k {
		case "status":
			if dropStatus {
				continue
			}
		case "metadata":
			if meta, ok := v.(map[string]any); ok {
				out[k] = n.metadataCopy(meta)
				continue
			}
		}
		out[k] = deepCopyValue(v)
	}
	n.normalizeWith(out, defaults)
	return out
}

// metadataCopy deep-copies metadata without the fields normalizeWith
// deletes from it.
func (n *normalizer) metadataCopy(meta map[string]any) map[string]any {
	out := make(map[string]any, len(meta))
	for k, v := range meta {
		if isServerMetadata(k) {
			continue
		}
		if anns, ok := v.(map[string]any); ok && k == "annotations" {
			kept := make(map[string]any, len(anns))
			for ak, av := range anns {
				if !slices.Contains(n.dropAnns, ak) {
					kept[ak] = deepCopyValue(av)
				}
			}
			out[k] = kept
			continue
		}
		out[k] = deepCopyValue(v)
	}
	return out
}

// isServerMetadata reports whether k is one of serverMetadata.
func isServerMetadata(k string) bool {
	for _, f := range serverMetadata {
		if f == k {
			return true
		}
	}
	return false
}

// dropsStatus reports whether rule 2 drops the status of kind gk.
func (n *normalizer) dropsStatus(gk schema.GroupKind) bool {
	return !n.compareStatus[gk] && (!n.compareAllStatus || n.ignoreStatus[gk])
}

func (n *normalizer) normalizeWith(obj map[string]any, defaults bool) {
	gvk := gvkOfMap(obj)
	if meta, ok := obj["metadata"].(map[string]any); ok {
		for _, f := range serverMetadata {
			delete(meta, f)
		}
		if anns, ok := meta["annotations"].(map[string]any); ok {
			for _, k := range n.dropAnns {
				delete(anns, k)
			}
		}
		dropEmpty(meta, "annotations")
		dropEmpty(meta, "labels")
	}
	if n.dropsStatus(gvk.GroupKind()) {
		delete(obj, "status")
	}
	if isSecretGVK(gvk) {
		foldStringData(obj)
	}
	n.known.apply(obj, gvk.GroupKind(), defaults)
	normalizeValue(obj, n.trees.forGVK(gvk), defaults)
	if f := n.byKind[gvk.GroupKind()]; f != nil {
		f(obj)
	}
}

func gvkOfMap(obj map[string]any) schema.GroupVersionKind {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return schema.FromAPIVersionAndKind(apiVersion, kind)
}

func dropEmpty(m map[string]any, key string) {
	switch v := m[key].(type) {
	case nil:
		delete(m, key)
	case map[string]any:
		if len(v) == 0 {
			delete(m, key)
		}
	}
}

// foldStringData moves a Secret's stringData into data, as the API server
// does on write; a stringData key wins over the same data key.
func foldStringData(obj map[string]any) {
	data, _ := obj["data"].(map[string]any)
	if sd, ok := obj["stringData"].(map[string]any); ok {
		if data == nil {
			data = make(map[string]any, len(sd))
		}
		for k, v := range sd {
			s, _ := v.(string)
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
		delete(obj, "stringData")
	}
	for k, v := range data {
		if v == nil {
			data[k] = ""
		}
	}
	if data != nil {
		obj["data"] = data
	}
}

// normalizeValue returns v normalised under type node t (nil: no type
// information), filling the server's defaults when defaults is set. Maps
// and lists are rewritten in place.
func normalizeValue(v any, t *typeNode, defaults bool) any {
	switch x := v.(type) {
	case map[string]any:
		if defaults && t != nil && t.defaults != nil {
			t.defaults(x)
		}
		for k, c := range x {
			if c == nil {
				delete(x, k)
				continue
			}
			var f *typeField
			var cn *typeNode
			if t != nil {
				switch t.kind {
				case nodeStruct:
					if f = t.fields[k]; f != nil {
						cn = f.node
					}
				case nodeMap:
					cn = t.elem
				}
			}
			nv := normalizeValue(c, cn, defaults)
			if f != nil && f.omitEmpty && isEmptyCollection(nv) {
				delete(x, k)
				continue
			}
			if !sameScalar(c, nv) {
				x[k] = nv
			}
		}
		return x
	case []any:
		et := t.elemNode()
		for i, c := range x {
			x[i] = normalizeValue(c, et, defaults)
		}
		return v // the same list; returning x would box its header again
	case float64:
		if t != nil && t.kind == nodeQuantity {
			return canonicalQuantityNumber(x)
		}
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	case int:
		return normalizeValue(int64(x), t, defaults)
	case int32:
		return normalizeValue(int64(x), t, defaults)
	case int64:
		if t != nil && t.kind == nodeQuantity {
			return canonicalQuantityNumber(float64(x))
		}
	case string:
		if t == nil {
			break
		}
		switch t.kind {
		case nodeQuantity:
			if plainCanonicalQuantity(x) {
				break // parsing and printing it would allocate to give it back
			}
			if q, err := resource.ParseQuantity(x); err == nil {
				if c := q.String(); c != x {
					return c
				}
			}
		case nodeIntOrString:
			if i, ok := decimalInt(x); ok {
				return i
			}
		}
	}
	// Unchanged: return v itself, not a re-boxed copy, which would allocate.
	return v
}

// sameScalar reports whether replacing a with b would change nothing
// visible: the same map or slice (rewritten in place) or an equal scalar.
func sameScalar(a, b any) bool {
	switch av := a.(type) {
	case map[string]any, []any:
		return true
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case int64:
		bv, ok := b.(int64)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	}
	return false
}

// plainCanonicalQuantity reports whether s is a quantity already in
// canonical form in the commonest way: "0", or 1 to 999 (no leading zero)
// with no suffix or one but Ei ("2", "100m", "128Mi"), which the quantity
// parser gives back unchanged (TestPlainCanonicalQuantity checks every
// such form against it). It reads, and allocates, nothing else.
func plainCanonicalQuantity(s string) bool {
	if s == "0" {
		return true
	}
	i := 0
	for i < len(s) && i < 3 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || s[0] == '0' {
		return false
	}
	switch s[i:] {
	case "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi":
		return true
	}
	return false
}

func canonicalQuantityNumber(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return resource.NewQuantity(int64(f), resource.DecimalSI).String()
	}
	return resource.NewMilliQuantity(int64(math.Round(f*1000)), resource.DecimalSI).String()
}

// decimalInt parses a string of decimal digits (an int-or-string written as
// text); anything else is left a string.
func decimalInt(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func isEmptyCollection(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// isSecretGVK reports whether gvk is a core Secret. Masking is decided from
// this, on the parsed objects of both sides, never from a caller's claim.
func isSecretGVK(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "" && gvk.Kind == "Secret"
}

func isSecret(u *unstructured.Unstructured) bool {
	return u != nil && isSecretGVK(gvkOfMap(u.Object))
}
