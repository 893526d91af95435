package health

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/resource"
)

func object(apiVersion, kind string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "x", "namespace": "ns", "generation": int64(1)},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func returns(code string) string {
	return `return {status = "` + code + `", message = "from ` + code + `"}`
}

func mustChecker(t *testing.T, opts Options) *DefaultChecker {
	t.Helper()
	c, err := NewChecker(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChecker_ResolutionOrder(t *testing.T) {
	opts := DefaultOptions()
	opts.Overrides = map[string]string{
		"apps/Deployment":             returns("Suspended"), // beats the Go check
		"*.crossplane.io/*":           returns("Degraded"),  // beats the shipped wildcard
		"s3.aws.crossplane.io/Bucket": returns("Healthy"),   // exact beats wildcard override
		"cert-manager.io_*":           returns("Missing"),   // wildcard override beats shipped exact
		"example.com/*":               returns("Progressing"),
		"*.example.com/*":             returns("Unknown"),
	}
	c := mustChecker(t, opts)
	for _, tc := range []struct {
		apiVersion, kind string
		want             Code
		script           string
	}{
		{"apps/v1", "Deployment", Suspended, "override apps/Deployment"},
		{"s3.aws.crossplane.io/v1", "Bucket", Healthy, "override s3.aws.crossplane.io/Bucket"},
		{"ec2.aws.crossplane.io/v1", "VPC", Degraded, "override *.crossplane.io/*"},
		{"cert-manager.io/v1", "Certificate", Missing, "override cert-manager.io/*"},
		{"example.com/v1", "Widget", Progressing, "override example.com/*"},
		{"sub.example.com/v1", "Widget", Unknown, "override *.example.com/*"},
	} {
		obj := object(tc.apiVersion, tc.kind, nil)
		st, err := c.Check(obj)
		if err != nil {
			t.Fatal(err)
		}
		if st.Code != tc.want {
			t.Errorf("%s/%s: got %s, want %s", tc.apiVersion, tc.kind, st, tc.want)
		}
		if got := c.ScriptFor(resource.GroupKindOf(obj)); got != tc.script {
			t.Errorf("%s/%s: script %q, want %q", tc.apiVersion, tc.kind, got, tc.script)
		}
	}
}

func TestChecker_ShippedScriptsAndFallbacks(t *testing.T) {
	c := mustChecker(t, DefaultOptions())
	cases := []struct {
		gk     schema.GroupKind
		script string
	}{
		{schema.GroupKind{Group: "cert-manager.io", Kind: "Certificate"}, "cert-manager.io/Certificate/health.lua"},
		{schema.GroupKind{Group: "pkg.crossplane.io", Kind: "Provider"}, "pkg.crossplane.io/Provider/health.lua"}, // exact beats shipped wildcard
		{schema.GroupKind{Group: "ec2.aws.crossplane.io", Kind: "VPC"}, "_.crossplane.io/_/health.lua"},
		{schema.GroupKind{Group: "kro.run", Kind: "ShopApp"}, "kro.run/_/health.lua"},
		{schema.GroupKind{Group: "crossplane.io", Kind: "X"}, ""}, // "*." needs a subdomain
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, ""},
		{schema.GroupKind{Group: "example.com", Kind: "Widget"}, ""},
	}
	for _, tc := range cases {
		if got := c.ScriptFor(tc.gk); got != tc.script {
			t.Errorf("%v: script %q, want %q", tc.gk, got, tc.script)
		}
	}
	// No script and no Go check: the generic fallback, then no opinion.
	st, err := c.Check(object("example.com/v1", "Widget", map[string]any{"conditions": []any{cond("Ready", "True", "", "all good")}}))
	if err != nil || st == nil || st.Code != Healthy {
		t.Fatalf("generic: got %v, %v", st, err)
	}
	st, err = c.Check(object("example.com/v1", "Widget", nil))
	if err != nil || st != nil {
		t.Fatalf("no conventions: got %v, %v; want no opinion", st, err)
	}
	opts := DefaultOptions()
	opts.DisableGeneric = true
	opts.DisableBuiltinScripts = true
	c = mustChecker(t, opts)
	if st, _ := c.Check(object("example.com/v1", "Widget", map[string]any{"conditions": []any{cond("Ready", "True", "", "")}})); st != nil {
		t.Fatalf("generic disabled, got %v", st)
	}
	if got := c.ScriptFor(schema.GroupKind{Group: "cert-manager.io", Kind: "Certificate"}); got != "" {
		t.Fatalf("shipped scripts disabled, got %q", got)
	}
}

func TestChecker_DeletionIsProgressing(t *testing.T) {
	c := mustChecker(t, DefaultOptions())
	obj := live(t, "deployment-web")
	now := metav1.NewTime(time.Unix(1700000000, 0))
	obj.SetDeletionTimestamp(&now)
	st, _ := c.Check(obj)
	if st.Code != Progressing || st.Message != "Pending deletion" {
		t.Fatalf("got %v", st)
	}
	// A hook held by its finalizer is judged by its state.
	job := live(t, "job-once")
	job.SetDeletionTimestamp(&now)
	job.SetAnnotations(map[string]string{resource.AnnotationHook: "PostSync"})
	job.SetFinalizers([]string{HookFinalizer})
	if st, _ := c.Check(job); st.Code != Healthy {
		t.Fatalf("held hook: got %v", st)
	}
}

func TestChecker_BadOverrideFailsAtLoad(t *testing.T) {
	opts := DefaultOptions()
	opts.Overrides = map[string]string{"example.com/Widget": "return {"}
	_, err := NewChecker(opts)
	if !errors.Is(err, ErrLuaSyntax) || !strings.Contains(err.Error(), `override "example.com/Widget"`) {
		t.Fatalf("got %v", err)
	}
}

func TestChecker_ScriptResults(t *testing.T) {
	opts := DefaultOptions()
	opts.Overrides = map[string]string{
		"example.com/Invalid": `return {status = "Fine"}`,
		"example.com/Empty":   `return {}`,
		"example.com/Number":  `return 42`,
		"example.com/Error":   `error("boom")`,
		"example.com/Loop":    `while true do end`,
	}
	opts.Lua.Limits.Timeout = time.Minute // the instruction limit, not the clock, must stop Loop
	c := mustChecker(t, opts)
	check := func(kind string) (*Status, error) { return c.Check(object("example.com/v1", kind, nil)) }

	for _, kind := range []string{"Invalid", "Empty"} {
		st, err := check(kind)
		if err != nil || st.Code != Unknown || st.Message != "Lua returned an invalid health status" {
			t.Errorf("%s: got %v, %v", kind, st, err)
		}
	}
	for kind, sentinel := range map[string]error{"Number": ErrLuaRuntime, "Error": ErrLuaRuntime, "Loop": ErrLuaInstructionLimit} {
		st, err := check(kind)
		if !errors.Is(err, sentinel) {
			t.Errorf("%s: error %v, want %v", kind, err, sentinel)
			continue
		}
		if st == nil || st.Code != Unknown || !strings.Contains(st.Message, "example.com/"+kind+" ns/x") {
			t.Errorf("%s: status %v should be Unknown and name the object", kind, st)
		}
		var le *LuaError
		if !errors.As(err, &le) || le.Script != "override example.com/"+kind {
			t.Errorf("%s: error does not name the script: %v", kind, err)
		}
	}
}

func TestScriptKey(t *testing.T) {
	for in, want := range map[string]string{
		"apps/Deployment":        "apps/Deployment",
		"cert-manager.io_Issuer": "cert-manager.io/Issuer",
		"Service":                "Service",
		"_.crossplane.io/_":      "*.crossplane.io/*",
		"*.crossplane.io/*":      "*.crossplane.io/*",
		"kro.run/_":              "kro.run/*",
	} {
		if got := ScriptKey(in); got != want {
			t.Errorf("ScriptKey(%q) = %q, want %q", in, got, want)
		}
	}
}
