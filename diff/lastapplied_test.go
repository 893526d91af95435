package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/internal/benchdata"
	"github.com/kubegitops/gitops/resource"
)

// differPair returns a Differ with opts and its reference twin (every fast
// path off), masking Secret values with the same key.
func differPair(t *testing.T, opts Options) (fast, ref *Differ) {
	t.Helper()
	fast, ref = mustDiffer(t, opts), mustDiffer(t, opts)
	ref.norm.reference = true
	ref.mask = fast.mask
	return fast, ref
}

// sameDiff runs both Differs and fails unless they give the same result
// (every field, the objects, text and patch included) or the same error.
// It reports whether the comparison found a change.
func sameDiff(t *testing.T, what string, fast, ref *Differ, desired, live *unstructured.Unstructured) bool {
	t.Helper()
	ctx := context.Background()
	got, gerr := fast.Diff(ctx, desired, live)
	want, werr := ref.Diff(ctx, desired, live)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%s: error %v, reference %v", what, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: result differs from the reference:\n got %+v\nwant %+v\n%s\n%s", what, got, want, got.Text, want.Text)
	}
	return got.Modified
}

// equivalenceOptions are option sets for the whole-comparison equivalence
// tests: status rules, another tracking key, ignore rules of every kind.
func equivalenceOptions() map[string]Options {
	out := fastPathOptions()
	o := DefaultOptions()
	o.IgnoreRules = []IgnoreRule{
		{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}},
		{Group: "*", JQPathExpressions: []string{`.spec.template.spec.containers[]? | select(.name == "side") | .image`}},
		{Group: "apps", Kind: "*", ManagedFieldsManagers: []string{"kube-controller-manager", "hpa-controller"}},
		{Kind: "Secret", JSONPointers: []string{"/data/ignored"}},
	}
	out["ignore rules"] = o
	o = DefaultOptions()
	o.SyncOptions, _ = resource.ParseOptions("RespectIgnoreDifferences=true")
	o.IgnoreRules = []IgnoreRule{{Group: "*", JSONPointers: []string{"/metadata/labels", "/spec/template/spec/containers/0/resources"}}}
	out["respect ignore differences"] = o
	return out
}

// lastAppliedCase is a desired object and its live object from the API
// server, which a test gives last-applied annotations of its own.
type lastAppliedCase struct {
	name          string
	desired, live map[string]any
}

func lastAppliedCases(t *testing.T) []lastAppliedCase {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus: %v", err)
	}
	var out []lastAppliedCase
	for _, f := range files {
		c := loadCorpusCase(t, f)
		out = append(out, lastAppliedCase{c.Name + "/csa", c.Desired, c.LiveCSA}, lastAppliedCase{c.Name + "/ssa", c.Desired, c.LiveSSA})
	}
	// The benchmark's Deployment, its live object as the server stores it
	// (defaults filled, read back as JSON).
	desired, err := benchdata.Deployment("bench", "app")
	if err != nil {
		t.Fatal(err)
	}
	live := mustDiffer(t, DefaultOptions()).Normalize(desired)
	live.SetUID("u")
	live.SetResourceVersion("7")
	raw, _ := json.Marshal(live.Object)
	var lm map[string]any
	if err := json.Unmarshal(raw, &lm); err != nil {
		t.Fatal(err)
	}
	out = append(out, lastAppliedCase{"bench deployment", desired.Object, (&unstructured.Unstructured{Object: lm}).DeepCopy().Object})
	// Kinds the in-place reader leaves to the decoder, and a custom one.
	for _, s := range []string{
		`{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"e","namespace":"n"},"subsets":[{"addresses":[{"ip":"10.0.0.2"},{"ip":"10.0.0.1"}],"ports":[{"port":80,"name":"a"}]}]}`,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r"},"aggregationRule":{"clusterRoleSelectors":[]},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`,
		`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t","namespace":"n","labels":{"a":"b"}},"spec":{"n":2,"l":[1,2],"m":{"cpu":"500m"},"items":[{"name":"x","v":1}]},"status":{"ready":true}}`,
	} {
		u := mustObject(t, s)
		out = append(out, lastAppliedCase{u.GetKind(), u.Object, deepCopyMap(u.Object)})
	}
	return out
}

// valuePaths lists the paths of every value under v (maps' keys and lists'
// indexes), v itself excluded.
func valuePaths(v any, prefix fieldPath, out *[]fieldPath) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := append(append(fieldPath{}, prefix...), k)
			*out = append(*out, p)
			valuePaths(c, p, out)
		}
	case []any:
		for i, c := range x {
			p := append(append(fieldPath{}, prefix...), fmt.Sprint(i))
			*out = append(*out, p)
			valuePaths(c, p, out)
		}
	}
}

func randomPath(rng *rand.Rand, v any) fieldPath {
	var paths []fieldPath
	valuePaths(v, nil, &paths)
	if len(paths) == 0 {
		return nil
	}
	// Sort for a deterministic choice (map order is random).
	sortPathsForRemoval(paths)
	return paths[rng.IntN(len(paths))]
}

// set stores v at p, whose parent must exist.
func set(root any, p fieldPath, v any) {
	parent, ok := lookup(root, p[:len(p)-1])
	if !ok {
		return
	}
	switch c := parent.(type) {
	case map[string]any:
		c[p[len(p)-1]] = v
	case []any:
		var i int
		if _, err := fmt.Sscan(p[len(p)-1], &i); err == nil && i < len(c) {
			c[i] = v
		}
	}
}

// mutate changes obj at a random place: removes a value, makes it null,
// empty, another scalar (numbers as text, floats, quantities, HTML
// characters that encoding/json escapes), or copies there a value live has
// (so that the last-applied object holds fields desired lacks).
func mutate(rng *rand.Rand, obj, live map[string]any) {
	if rng.IntN(3) == 0 {
		if p := randomPath(rng, live); p != nil {
			if v, ok := lookup(live, p); ok {
				if _, ok := lookup(obj, p[:len(p)-1]); ok {
					set(obj, p, deepCopyValue(v))
					return
				}
			}
		}
	}
	p := randomPath(rng, obj)
	if p == nil {
		return
	}
	scalars := []any{"8080", 8080.0, 1.5, "100m", "0.1", true, "", "a<b&c", nil, map[string]any{}, []any{}, map[string]any{"x": nil}, []any{nil}}
	switch rng.IntN(4) {
	case 0:
		remove(obj, p)
	default:
		set(obj, p, scalars[rng.IntN(len(scalars))])
	}
}

// textMutate changes the annotation's text: indented, a repeated member,
// escaped member names, cut short (invalid), or left alone.
func textMutate(rng *rand.Rand, obj map[string]any) string {
	raw, _ := json.Marshal(obj)
	s := string(raw)
	switch rng.IntN(12) {
	case 0:
		ind, _ := json.MarshalIndent(obj, "", "  ")
		return string(ind)
	case 1:
		return strings.Replace(s, `"spec":{`, `"spec":null,"spec":{`, 1)
	case 2:
		return strings.Replace(s, `{"`, `{"\u0078":1,"`, 1)
	case 3:
		return s[:len(s)/2]
	case 4:
		return "null"
	}
	return s
}

// TestLastAppliedViewMatchesDecoding compares three-way comparisons that
// read the last-applied annotation in place with the reference, which
// decodes and normalises it: on every corpus object, the benchmark's
// Deployment and kinds with rules of their own, under option sets with
// status rules and ignore rules, with thousands of last-applied
// annotations made from desired by random changes (removed, null, empty
// and re-typed values, values copied from live so that fields are
// deleted, escaped, repeated and invalid text), with desired changed too
// at times (drifted). Every result must be the same, in sync or not.
func TestLastAppliedViewMatchesDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	cases := lastAppliedCases(t)
	var viewed, total, modified int
	for name, opts := range equivalenceOptions() {
		opts.Mode = ModeThreeWay
		fast, ref := differPair(t, opts)
		for _, c := range cases {
			for n := 0; n < 12; n++ {
				desired := deepCopyMap(c.desired)
				if n%4 == 3 {
					mutate(rng, desired, c.live)
				}
				last := deepCopyMap(c.desired)
				for k := rng.IntN(4); k >= 0 && n > 0; k-- {
					mutate(rng, last, c.live)
				}
				text := textMutate(rng, last)
				live := deepCopyMap(c.live)
				meta, _ := live["metadata"].(map[string]any)
				anns, _ := meta["annotations"].(map[string]any)
				if anns == nil {
					anns = map[string]any{}
					meta["annotations"] = anns
				}
				anns[resource.AnnotationLastApplied] = text
				du, lu := &unstructured.Unstructured{Object: desired}, &unstructured.Unstructured{Object: live}
				if _, ok := fast.viewLastApplied(text, du.GroupVersionKind()); ok {
					viewed++
				}
				total++
				if sameDiff(t, fmt.Sprintf("%s/%s/%d last-applied %s", name, c.name, n, text), fast, ref, du, lu) {
					modified++
				}
			}
		}
	}
	t.Logf("%d comparisons, %d read the annotation in place, %d modified", total, viewed, modified)
	if viewed < total/3 || modified < total/4 || modified > total*3/4 {
		t.Errorf("%d comparisons, %d read in place, %d modified: the test no longer covers the fast path in sync and drifted", total, viewed, modified)
	}
}

// TestLastAppliedViewTakesTheCommonCase: the annotations kubectl and the
// engine write, on the kinds the corpus holds but Secrets, are read in
// place.
func TestLastAppliedViewTakesTheCommonCase(t *testing.T) {
	d := mustDiffer(t, DefaultOptions())
	for _, c := range lastAppliedCases(t) {
		u := &unstructured.Unstructured{Object: c.live}
		raw := annotation(c.live, resource.AnnotationLastApplied)
		if raw == "" {
			continue
		}
		if _, ok := d.viewLastApplied(raw, u.GroupVersionKind()); ok == isSecret(u) {
			t.Errorf("%s: read in place %v", c.name, ok)
		}
	}
	if _, ok := d.viewLastApplied(`{"apiVersion":"apps/v1beta1","kind":"Deployment"}`, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}); ok {
		t.Error("a last-applied object of another version is read in place")
	}
}

// TestAnnotationReadsAsGetAnnotations checks annotation against
// GetAnnotations on annotations of every shape.
func TestAnnotationReadsAsGetAnnotations(t *testing.T) {
	for _, meta := range []any{
		nil, "x", map[string]any{}, map[string]any{"annotations": nil}, map[string]any{"annotations": "x"},
		map[string]any{"annotations": map[string]any{"k": "v"}}, map[string]any{"annotations": map[string]any{"k": nil}},
		map[string]any{"annotations": map[string]any{"k": "v", "n": 1}}, map[string]any{"annotations": map[string]any{"k": 1}},
	} {
		obj := map[string]any{"metadata": meta}
		if meta == nil {
			obj = map[string]any{}
		}
		want := (&unstructured.Unstructured{Object: obj}).GetAnnotations()["k"]
		if got := annotation(obj, "k"); got != want {
			t.Errorf("%v: %q, want %q", meta, got, want)
		}
	}
}

// TestLastAppliedViewRules checks, one by one, the normalisation rules that
// decide whether the last-applied object holds a field (and so whether a
// field live has and desired lacks is deleted): each case is compared in
// place and by the reference, and must give the verdict written.
func TestLastAppliedViewRules(t *testing.T) {
	const deploy = `"apiVersion":"apps/v1","kind":"Deployment"`
	const thing = `"apiVersion":"example.com/v1","kind":"Thing"`
	pod := func(spec string) string {
		return `"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{` + spec + `}}}`
	}
	cases := []struct {
		name                string
		desired, live, last string
		modified            bool
		viewed              bool
	}{
		{"annotations holding only the tracking annotation are none",
			`{` + deploy + `,"metadata":{"name":"d"}}`,
			`{` + deploy + `,"metadata":{"name":"d","annotations":{"other":"x"}}}`,
			`{` + deploy + `,"metadata":{"name":"d","annotations":{"gitops.kubegitops.io/tracking-id":"a"}}}`, false, true},
		{"annotations holding another annotation are ours",
			`{` + deploy + `,"metadata":{"name":"d"}}`,
			`{` + deploy + `,"metadata":{"name":"d","annotations":{"other":"x"}}}`,
			`{` + deploy + `,"metadata":{"name":"d","annotations":{"gitops.kubegitops.io/tracking-id":"a","x":"y"}}}`, true, true},
		{"a built-in kind's annotations of the tracking one and nulls are none",
			`{` + deploy + `,"metadata":{"name":"d"}}`,
			`{` + deploy + `,"metadata":{"name":"d","annotations":{"other":"x"}}}`,
			`{` + deploy + `,"metadata":{"name":"d","annotations":{"gitops.kubegitops.io/tracking-id":"a","x":null}}}`, false, true},
		{"a custom kind's empty labels are none",
			`{` + thing + `,"metadata":{"name":"t"}}`,
			`{` + thing + `,"metadata":{"name":"t","labels":{"a":"b"}}}`,
			`{` + thing + `,"metadata":{"name":"t","labels":{}}}`, false, true},
		{"a custom kind's tracking-only annotations are none",
			`{` + thing + `,"metadata":{"name":"t"}}`,
			`{` + thing + `,"metadata":{"name":"t","annotations":{"a":"b"}}}`,
			`{` + thing + `,"metadata":{"name":"t","annotations":{"gitops.kubegitops.io/tracking-id":"a","kubectl.kubernetes.io/last-applied-configuration":"{}"}}}`, false, true},
		{"a custom kind's annotations of nulls stay (untyped: not omitempty)",
			`{` + thing + `,"metadata":{"name":"t"}}`,
			`{` + thing + `,"metadata":{"name":"t","annotations":{"a":"b"}}}`,
			`{` + thing + `,"metadata":{"name":"t","annotations":{"a":null}}}`, true, true},
		{"a built-in kind's annotations of nulls go (omitempty)",
			`{` + deploy + `,"metadata":{"name":"d"}}`,
			`{` + deploy + `,"metadata":{"name":"d","annotations":{"a":"b"}}}`,
			`{` + deploy + `,"metadata":{"name":"d","annotations":{"a":null}}}`, false, true},
		{"a null field is none",
			`{` + thing + `,"metadata":{"name":"t"},"spec":{}}`,
			`{` + thing + `,"metadata":{"name":"t"},"spec":{"x":1}}`,
			`{` + thing + `,"metadata":{"name":"t"},"spec":{"x":null}}`, false, true},
		{"a field we applied and removed is deleted",
			`{` + thing + `,"metadata":{"name":"t"},"spec":{}}`,
			`{` + thing + `,"metadata":{"name":"t"},"spec":{"x":1}}`,
			`{` + thing + `,"metadata":{"name":"t"},"spec":{"x":2}}`, true, true},
		{"an omitempty list left empty is none",
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}],"tolerations":[{"key":"k","operator":"Exists"}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}],"tolerations":[]`) + `}`, false, true},
		{"an omitempty map of nulls is none",
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}],"nodeSelector":{"a":"b"}`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}],"nodeSelector":{"x":null}`) + `}`, false, true},
		{"an omitempty map with a value is ours",
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}],"nodeSelector":{"a":"b"}`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}],"nodeSelector":{"x":"y"}`) + `}`, true, true},
		{"a container we applied and removed is deleted",
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"},{"name":"side","image":"s:1"}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"},{"name":"side"}]`) + `}`, true, true},
		{"a container another manager added is kept",
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"},{"name":"side","image":"s:1"}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1"},{"name":null},{"image":"side"},"side"]`) + `}`, false, true},
		{"a port we applied as a float is found by its number",
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1","ports":[{"containerPort":80}]}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1","ports":[{"containerPort":80},{"containerPort":8080}]}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1","ports":[{"containerPort":80},{"containerPort":8080.0}]}]`) + `}`, true, true},
		{"a port another manager added is kept",
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1","ports":[{"containerPort":80}]}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1","ports":[{"containerPort":80},{"containerPort":8080}]}]`) + `}`,
			`{` + deploy + `,"metadata":{"name":"d"},` + pod(`"containers":[{"name":"c","image":"i:1","ports":[{"containerPort":80},{"containerPort":"8080"},{"containerPort":8081}]}]`) + `}`, false, true},
		{"a finalizer we applied and removed is deleted",
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a"]}}`,
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a","b"]}}`,
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a","b"]}}`, true, true},
		{"a finalizer another controller added is kept",
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a"]}}`,
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a","b"]}}`,
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a",null,1,"b\u003c",{"b":1}]}}`, false, true},
		// (The API server stores no null finalizer: the patch fails, the
		// same way on both paths, which is what is checked.)
		{"a null finalizer we applied and removed is deleted",
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a"]}}`,
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a",null]}}`,
			`{` + deploy + `,"metadata":{"name":"d","finalizers":[null]}}`, false, true},
		{"an escaped value compares as its text",
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a"]}}`,
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a","b<"]}}`,
			`{` + deploy + `,"metadata":{"name":"d","finalizers":["a","b\u003c"]}}`, true, true},
		{"an int-or-string key compares normalised",
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}`,
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80},{"port":81}]}}`,
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80},{"port":81.0}]}}`, true, true},
		{"a retainKeys union drops what desired does not name",
			`{` + deploy + `,"metadata":{"name":"d"},"spec":{"strategy":{"type":"Recreate"}}}`,
			`{` + deploy + `,"metadata":{"name":"d"},"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}`,
			`{` + deploy + `,"metadata":{"name":"d"}}`, true, true},
		{"a last-applied object of another version is decoded",
			`{` + thing + `,"metadata":{"name":"t"},"spec":{}}`,
			`{` + thing + `,"metadata":{"name":"t"},"spec":{"x":1}}`,
			`{"apiVersion":"example.com/v2","kind":"Thing","metadata":{"name":"t"},"spec":{"x":2}}`, true, false},
	}
	for name, opts := range map[string]Options{"default": DefaultOptions(), "status compared": func() Options {
		o := DefaultOptions()
		o.CompareAllStatus = true
		return o
	}()} {
		opts.Mode = ModeThreeWay
		fast, ref := differPair(t, opts)
		for _, c := range cases {
			desired, live := mustObject(t, c.desired), mustObject(t, c.live)
			anns := live.GetAnnotations()
			if anns == nil {
				anns = map[string]string{}
			}
			anns[resource.AnnotationLastApplied] = c.last
			live.SetAnnotations(anns)
			if _, ok := fast.viewLastApplied(c.last, desired.GroupVersionKind()); ok != c.viewed {
				t.Errorf("%s: read in place %v, want %v", c.name, ok, c.viewed)
			}
			if got := sameDiff(t, name+": "+c.name, fast, ref, desired, live); got != c.modified {
				t.Errorf("%s: %s: modified %v, want %v", name, c.name, got, c.modified)
			}
		}
	}
	// Status, compared for every kind: a status we applied and removed is
	// deleted; a null one is none; one of nulls stays a (empty) status in
	// an untyped kind.
	opts := DefaultOptions()
	opts.Mode = ModeThreeWay
	opts.CompareAllStatus = true
	fast, ref := differPair(t, opts)
	for last, modified := range map[string]bool{
		`{` + thing + `,"metadata":{"name":"t"},"status":{"ready":true}}`: true,
		`{` + thing + `,"metadata":{"name":"t"},"status":null}`:           false,
		`{` + thing + `,"metadata":{"name":"t"},"status":{"ready":null}}`: true,
	} {
		desired := mustObject(t, `{`+thing+`,"metadata":{"name":"t"}}`)
		live := mustObject(t, `{`+thing+`,"metadata":{"name":"t","annotations":{"kubectl.kubernetes.io/last-applied-configuration":`+fmt.Sprintf("%q", last)+`}},"status":{"ready":true}}`)
		if got := sameDiff(t, "status "+last, fast, ref, desired, live); got != modified {
			t.Errorf("status %s: modified %v, want %v", last, got, modified)
		}
	}
}

// FuzzLastAppliedView: whatever the last-applied annotation holds, a
// three-way comparison that reads it in place gives the reference's
// result (or error).
func FuzzLastAppliedView(f *testing.F) {
	desired, err := benchdata.Deployment("bench", "app")
	if err != nil {
		f.Fatal(err)
	}
	seed, _ := json.Marshal(desired.Object)
	f.Add(string(seed))
	f.Add(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"x":null}},"spec":{"template":{"spec":{"containers":[{"name":"app","ports":[{"containerPort":9090.0}]},{"name":"gone"}],"volumes":[]}}}}`)
	f.Add(`{"apiVersion":"apps/v1","kind":"Deployment","spec":{"strategy":{"rollingUpdate":{"maxSurge":"25%"}},"revisionHistoryLimit":10}}`)
	opts := DefaultOptions()
	opts.Mode = ModeThreeWay
	d := mustDiffer(f, opts)
	live := d.Normalize(desired)
	live.SetUID("u")
	f.Fuzz(func(t *testing.T, raw string) {
		fast, ref := mustDiffer(t, opts), mustDiffer(t, opts)
		ref.norm.reference = true
		ref.mask = fast.mask
		l := live.DeepCopy()
		l.SetAnnotations(map[string]string{resource.AnnotationLastApplied: raw})
		sameDiff(t, raw, fast, ref, desired, l)
	})
}
