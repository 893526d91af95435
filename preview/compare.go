package preview

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/resource"
)

// Change says what happens to one object.
type Change string

// The changes an object can see.
const (
	Added   Change = "added"
	Removed Change = "removed"
	Changed Change = "changed"
)

// ObjectChange is one object that differs between the base and head
// renders (or, in a live comparison, between the head render and the
// cluster).
type ObjectChange struct {
	// Key names the object.
	Key resource.Key `json:"key"`
	// Change says what the head revision does to the object: added, removed or
	// changed.
	Change Change `json:"change"`
	// Diff is a unified diff in YAML, Secret values masked.
	Diff string `json:"diff,omitempty"`
	// Kept is set on a Removed object of a live comparison that a sync
	// would leave in the cluster as an orphan (it requires pruning): the
	// app's sync does not prune (no automated sync with prune: true) or
	// the object's sync options disable or gate pruning.
	Kept bool `json:"kept,omitempty"`
}

// compareObjects returns the objects added, removed or changed from base
// to head, sorted by key. Objects without a namespace get defaultNS, as
// the engine would apply them.
func compareObjects(base, head []*unstructured.Unstructured, defaultNS string) ([]ObjectChange, error) {
	b, h := byKey(base, defaultNS), byKey(head, defaultNS)
	keys := make([]resource.Key, 0, len(b)+len(h))
	for k := range b {
		keys = append(keys, k)
	}
	for k := range h {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	var out []ObjectChange
	for _, k := range keys {
		from, to := b[k], h[k]
		if from != nil && to != nil && reflect.DeepEqual(from.Object, to.Object) {
			continue
		}
		c := ObjectChange{Key: k, Change: Changed}
		switch {
		case from == nil:
			c.Change = Added
		case to == nil:
			c.Change = Removed
		}
		text, err := objectDiff(k, from, to)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		c.Diff = text
		out = append(out, c)
	}
	return out, nil
}

func byKey(objs []*unstructured.Unstructured, defaultNS string) map[resource.Key]*unstructured.Unstructured {
	m := make(map[resource.Key]*unstructured.Unstructured, len(objs))
	for _, o := range objs {
		if o.GetNamespace() == "" && defaultNS != "" && !resource.BuiltinClusterScoped(o.GetKind()) {
			o = o.DeepCopy()
			o.SetNamespace(defaultNS)
		}
		m[resource.KeyOf(o)] = o
	}
	return m
}

// objectDiff writes the diff of one object, masking Secrets on both sides
// with the same placeholders.
func objectDiff(k resource.Key, from, to *unstructured.Unstructured) (string, error) {
	var a, b map[string]any
	m := newMasker()
	if from != nil {
		a = m.mask(from).Object
	}
	if to != nil {
		b = m.mask(to).Object
	}
	return diff.UnifiedYAML("base/"+k.String(), "head/"+k.String(), a, b)
}

// masker replaces the values of core Secrets by placeholders numbered in
// the order they are met: equal values get equal placeholders, so a diff
// shows which keys changed and nothing of their values.
type masker struct {
	seen map[string]string
}

func newMasker() *masker { return &masker{seen: map[string]string{}} }

func isSecret(obj *unstructured.Unstructured) bool {
	return obj.GetKind() == "Secret" && obj.GetAPIVersion() == "v1"
}

func (m *masker) placeholder(v string) string {
	if p, ok := m.seen[v]; ok {
		return p
	}
	p := fmt.Sprintf("+masked-%d+", len(m.seen)+1)
	m.seen[v] = p
	return p
}

// mask returns a masked copy of a Secret (obj itself for other kinds):
// data and stringData values, and the last-applied annotation whole.
func (m *masker) mask(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if !isSecret(obj) {
		return obj
	}
	obj = obj.DeepCopy()
	for _, field := range []string{"data", "stringData"} {
		vals, ok := obj.Object[field].(map[string]any)
		if !ok {
			continue
		}
		names := make([]string, 0, len(vals))
		for k := range vals {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			s := fmt.Sprint(vals[k])
			if field == "stringData" {
				s = base64.StdEncoding.EncodeToString([]byte(s))
			}
			vals[k] = m.placeholder(s)
		}
	}
	if ann := obj.GetAnnotations(); ann != nil {
		if _, ok := ann[resource.AnnotationLastApplied]; ok {
			ann[resource.AnnotationLastApplied] = "+masked+"
			obj.SetAnnotations(ann)
		}
	}
	return obj
}

// oneLine shortens an error message to one line for tables.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}
