package diff

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fastPathObjects returns objects for the fast-path equivalence tests: the
// corpus (desired objects and what a real API server returned for them,
// with managedFields, last-applied annotations and status) and hand-written
// objects aimed at each normalisation rule that drops something.
func fastPathObjects(t *testing.T) []map[string]any {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus: %v", err)
	}
	var out []map[string]any
	for _, f := range files {
		c := loadCorpusCase(t, f)
		out = append(out, c.Desired, c.LiveCSA, c.LiveSSA)
	}
	for _, s := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u","resourceVersion":"9","generation":3,"managedFields":[{"manager":"m"}],"annotations":{"gitops.kubegitops.io/tracking-id":"a:/ConfigMap:/c","kubectl.kubernetes.io/last-applied-configuration":"{}"}},"data":{"a":"1"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":{"keep":"1","gitops.kubegitops.io/tracking-id":"x"},"labels":{}},"data":{"a":null}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":null,"labels":null},"data":{}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":{"a":null}}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":"not a map","status":{"x":1}}`,
		`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t","annotations":{"a":null},"labels":{}},"spec":{"n":2.0,"l":[],"m":{}},"status":{"ready":true}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx","resources":{"limits":{"cpu":0.5,"memory":"1024Mi"}}}]}}},"status":{"replicas":1}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"k":"v"},"data":{"n":null}}`,
		`{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"e"},"subsets":[{"addresses":[{"ip":"10.0.0.2"},{"ip":"10.0.0.1"}],"ports":[{"port":80}]}]}`,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r"},"aggregationRule":{},"rules":[]}`,
		`{"kind":"NoVersion","metadata":{"name":"n"},"status":{}}`,
		`{}`,
	} {
		out = append(out, mustObject(t, s).Object)
	}
	return out
}

// fastPathOptions are option sets that change what normalisation drops.
func fastPathOptions() map[string]Options {
	out := map[string]Options{"default": DefaultOptions()}
	o := DefaultOptions()
	o.CompareStatus = []schema.GroupKind{{Group: "example.com", Kind: "Thing"}, {Group: "apps", Kind: "Deployment"}}
	out["compare some status"] = o
	o = DefaultOptions()
	o.CompareAllStatus = true
	o.IgnoreStatus = []schema.GroupKind{{Group: "apps", Kind: "Deployment"}}
	o.IgnoreAggregatedRoles = true
	out["compare all status"] = o
	o = DefaultOptions()
	o.Tracking.AnnotationKey = "keep"
	o.KnownTypeFields = []KnownTypeField{{Group: "example.com", Kind: "Thing", Field: "spec.m", Type: "core/v1/ResourceRequirements"}}
	out["other tracking key, known types"] = o
	return out
}

// TestNormalizedCopyMatchesCopyThenNormalize checks normalizedCopy, which
// never copies what normalisation drops, against normalising a full deep
// copy: the same object, and the input untouched.
func TestNormalizedCopyMatchesCopyThenNormalize(t *testing.T) {
	objs := fastPathObjects(t)
	for name, opts := range fastPathOptions() {
		d := mustDiffer(t, opts)
		for i, obj := range objs {
			before := deepCopyMap(obj)
			for _, defaults := range []bool{true, false} {
				want := deepCopyMap(obj)
				d.norm.normalizeWith(want, defaults)
				got := d.norm.normalizedCopy(obj, defaults)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: object %d (defaults %v):\n got %v\nwant %v", name, i, defaults, got, want)
				}
			}
			if !reflect.DeepEqual(obj, before) {
				t.Errorf("%s: object %d modified", name, i)
			}
		}
	}
	if got := mustDiffer(t, DefaultOptions()).norm.normalizedCopy(nil, true); got != nil {
		t.Errorf("nil: %v", got)
	}
}

// TestPlainCanonicalQuantity checks the quantities normalisation keeps
// without parsing against the quantity parser: every mantissa from 0 to
// 2000 with every suffix, and malformed neighbours.
func TestPlainCanonicalQuantity(t *testing.T) {
	var inputs []string
	for _, suffix := range []string{"", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "i", "K", "mi", "e3", "E3", " "} {
		for m := 0; m <= 2000; m++ {
			inputs = append(inputs, fmt.Sprintf("%d%s", m, suffix), fmt.Sprintf("0%d%s", m, suffix), fmt.Sprintf("-%d%s", m, suffix), fmt.Sprintf("+%d%s", m, suffix), fmt.Sprintf("%d.5%s", m, suffix))
		}
	}
	inputs = append(inputs, "", "m", "Mi", ".5", "1.", "1e3")
	taken := 0
	for _, s := range inputs {
		if !plainCanonicalQuantity(s) {
			continue
		}
		taken++
		q, err := resource.ParseQuantity(s)
		if err != nil || q.String() != s {
			t.Errorf("%q kept as canonical; the parser gives %q, %v", s, q.String(), err)
		}
	}
	if taken != 1+999*15 {
		t.Errorf("%d quantities kept without parsing, want %d", taken, 1+999*15)
	}
	if allocs := testing.AllocsPerRun(100, func() { normalizeValue("128Mi", &typeNode{kind: nodeQuantity}, true) }); allocs != 0 {
		t.Errorf("a canonical quantity costs %v allocations", allocs)
	}
}
