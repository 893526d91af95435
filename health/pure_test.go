package health

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A verdict is pure only where no script and no host check judges the
// kind: built-in Go checks and the generic fallback read the object alone.
func TestPureKindsAreThoseNoScriptOrHostCheckJudges(t *testing.T) {
	opts := DefaultOptions()
	opts.Overrides = map[string]string{"example.com/Timed": `return {status = "Healthy", message = tostring(os.time())}`}
	opts.Checks = map[schema.GroupKind]CheckerFunc{
		{Group: "example.com", Kind: "Hosted"}: func(*unstructured.Unstructured) (*Status, error) { return &Status{Code: Healthy}, nil },
	}
	c := mustChecker(t, opts)
	cases := []struct {
		gk   schema.GroupKind
		pure bool
	}{
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, true},              // built-in Go check
		{schema.GroupKind{Kind: "ConfigMap"}, true},                              // generic fallback
		{schema.GroupKind{Group: "example.com", Kind: "Widget"}, true},           // generic fallback
		{schema.GroupKind{Group: "example.com", Kind: "Timed"}, false},           // override script
		{schema.GroupKind{Group: "example.com", Kind: "Hosted"}, false},          // host Go check
		{schema.GroupKind{Group: "cert-manager.io", Kind: "Certificate"}, false}, // shipped script
	}
	for _, tc := range cases {
		if got := c.Pure(tc.gk); got != tc.pure {
			t.Errorf("Pure(%v) = %v, want %v", tc.gk, got, tc.pure)
		}
	}
	// An override of a built-in kind makes it impure.
	opts.Overrides["apps/Deployment"] = `return {status = "Healthy"}`
	if mustChecker(t, opts).Pure(schema.GroupKind{Group: "apps", Kind: "Deployment"}) {
		t.Error("Pure(apps/Deployment) with an override script, want false")
	}
}
