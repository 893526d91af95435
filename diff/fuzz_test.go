package diff

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const fuzzBase = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},
"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
"spec":{"containers":[{"name":"app","image":"app:1","env":[{"name":"A","value":"1"}]},{"name":"side","image":"side:1"}]}}}}`

// FuzzIgnoreRules feeds arbitrary jq path expressions and objects to the
// ignore rules. A rule either fails to compile with a *RuleError, or every
// diff either fails with an *Error wrapping a *RuleError, or succeeds with
// a consistent result in which no ignored path is changed. Nothing panics
// and nothing runs past its timeout.
func FuzzIgnoreRules(f *testing.F) {
	for _, seed := range []struct{ expr, obj string }{
		{`.spec.replicas`, fuzzBase},
		{`.spec.template.spec.containers[] | select(.name == "side") | .image`, fuzzBase},
		{`.metadata.labels["app"]`, fuzzBase},
		{`.spec.template.spec.containers[].env[]?`, fuzzBase},
		{`..`, fuzzBase},
		{`.spec.replicas[]`, fuzzBase},
		{`if .spec.replicas > 1 then .spec.replicas else empty end`, fuzzBase},
		{`paths`, `{"a":[1,{"b":null}]}`},
		{`.[`, `{}`},
		{`getpath(["spec","x"])`, `{"spec":{"x":1.5}}`},
		{`range(1e9) as $i | select(false)`, fuzzBase},
	} {
		f.Add(seed.expr, []byte(seed.obj))
	}
	f.Fuzz(func(t *testing.T, expr string, raw []byte) {
		opts := DefaultOptions()
		opts.JQTimeout = 50 * time.Millisecond
		opts.IgnoreRules = []IgnoreRule{{Group: "*", JQPathExpressions: []string{expr}}}
		d, err := New(opts)
		if err != nil {
			var re *RuleError
			if !errors.As(err, &re) || re.Expression != expr {
				t.Fatalf("compile error %v is not a *RuleError for the expression", err)
			}
			return
		}
		var obj map[string]any
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			_ = json.Unmarshal([]byte(fuzzBase), &obj)
		}
		obj["apiVersion"], obj["kind"] = "apps/v1", "Deployment"
		obj["metadata"] = map[string]any{"name": "web", "namespace": "default"}
		desired := &unstructured.Unstructured{Object: obj}
		live := desired.DeepCopy()
		_ = unstructured.SetNestedField(live.Object, "changed", "spec", "fuzzedField")
		res, err := d.Diff(context.Background(), desired, live)
		if err != nil {
			// Every error names the object (*Error). A bad rule gives a
			// *RuleError inside it; a malformed object (a list item
			// without its merge key, which the API server would refuse
			// too) gives the underlying failure.
			var de *Error
			if !errors.As(err, &de) || de.Key.Name != "web" {
				t.Fatalf("diff error %v is not an *Error naming the object", err)
			}
			return
		}
		if res.Modified != (len(res.Changes) > 0) || res.Modified == res.Patch.IsEmpty() {
			t.Fatalf("inconsistent result: modified=%v changes=%v patch=%q", res.Modified, res.Changes, res.Patch.Data())
		}
	})
}

// FuzzSecretMasking spoofs kinds and groups around a Secret: whatever the
// apiVersion and kind on each side, if either side parses as a core Secret
// its values never appear in the output or the error.
func FuzzSecretMasking(f *testing.F) {
	f.Add("v1", "Secret", "v1", "Secret", "hunter2-secret-value")
	f.Add("v1", "ConfigMap", "v1", "Secret", "hunter2-secret-value")
	f.Add("example.com/v1", "Secret", "v1", "Secret", "hunter2-secret-value")
	f.Add("v1", "Secret", "apps/v1", "Deployment", "hunter2-secret-value")
	f.Add("/v1", "secret", "v1", "Secret ", "a-b-c-d-e")
	f.Fuzz(func(t *testing.T, av1, k1, av2, k2, value string) {
		if len(value) < 8 || strings.ContainsAny(value, "\"\\\n") {
			return
		}
		mk := func(av, kind, v string) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": av, "kind": kind,
				"metadata": map[string]any{"name": "s", "namespace": "n"},
				"data":     map[string]any{"k": base64.StdEncoding.EncodeToString([]byte(v))},
			}}
		}
		desired, live := mk(av1, k1, value), mk(av2, k2, value+"-old")
		if !isSecret(desired) && !isSecret(live) {
			return
		}
		d := mustDiffer(t, DefaultOptions())
		res, err := d.Diff(context.Background(), desired, live)
		var out string
		if err != nil {
			out = fmt.Sprintf("%v %+v", err, err)
		} else {
			js, _ := json.Marshal(res)
			out = fmt.Sprintf("%v %+v %s %s %s", res, res, js, res.Text, res.Patch)
		}
		for _, needle := range []string{value, base64.StdEncoding.EncodeToString([]byte(value))} {
			if strings.Contains(out, needle) {
				t.Fatalf("secret value leaked:\n%s", out)
			}
		}
	})
}
