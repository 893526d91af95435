package diff

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

const jqDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {team: a}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: "app:1"}
      - {name: istio-proxy, image: "proxy:1"}
`

// TestJQCompileErrorsReported checks that a rule that does not parse fails
// New with a *RuleError naming the expression.
func TestJQCompileErrorsReported(t *testing.T) {
	for _, expr := range []string{`.spec.[`, `del(.a`, `$undefined`, `undefined_function(1)`} {
		opts := DefaultOptions()
		opts.IgnoreRules = []IgnoreRule{{Kind: "Deployment", Group: "apps", JQPathExpressions: []string{expr}}}
		_, err := New(opts)
		var re *RuleError
		if !errors.As(err, &re) || re.Expression != expr {
			t.Errorf("%q: error %v, want a *RuleError for it", expr, err)
		}
	}
}

// TestJQEvaluationErrorsReported checks that a rule that fails on an object
// fails that object's diff with the rule named (argo-cd#24599: errors were
// silently ignored), and that a runaway expression times out.
func TestJQEvaluationErrorsReported(t *testing.T) {
	cases := map[string]string{
		"iterate a number":  `.spec.replicas[]`,
		"not a path":        `.spec.replicas + 1`,
		"whole object":      `.`,
		"error builtin":     `error("boom")`,
		"runaway timed out": `range(1e12) as $i | select(false)`,
	}
	desired := mustObject(t, jqDeployment)
	live := desired.DeepCopy()
	for name, expr := range cases {
		opts := DefaultOptions()
		opts.JQTimeout = 100 * time.Millisecond
		opts.IgnoreRules = []IgnoreRule{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{expr}}}
		d := mustDiffer(t, opts)
		start := time.Now()
		_, err := d.Diff(context.Background(), desired, live)
		var re *RuleError
		var de *Error
		if !errors.As(err, &re) || !errors.As(err, &de) {
			t.Errorf("%s: error %v, want *Error wrapping *RuleError", name, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "apps/Deployment default/web: ") || re.Expression != expr {
			t.Errorf("%s: error %q does not name the object and the expression", name, err)
		}
		if name == "runaway timed out" {
			if !errors.Is(err, errJQTimeout) {
				t.Errorf("runaway: %v, want a timeout", err)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("runaway: took %v", time.Since(start))
			}
		}
	}
}

// TestJQPredicateScopedToObject checks that a select() picks fields of the
// matching items only (argo-cd#16723: a select on labels ignored the field
// for every object), and that a rule for a missing field is harmless.
func TestJQPredicateScopedToObject(t *testing.T) {
	desired := mustObject(t, jqDeployment)
	live := desired.DeepCopy()
	containers, _, _ := nestedSlice(live.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "app:2"
	containers[1].(map[string]any)["image"] = "proxy:2"
	opts := DefaultOptions()
	opts.IgnoreRules = []IgnoreRule{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{
		`.spec.template.spec.containers[] | select(.name == "istio-proxy") | .image`,
		`.spec.doesNotExist.atAll`,
		`select(.metadata.labels.team == "b") | .spec.replicas`,
	}}}
	res, err := mustDiffer(t, opts).Diff(context.Background(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || res.Changes[0].Path != "/spec/template/spec/containers/0/image" {
		t.Errorf("changes %v, want only the app container's image", res.Changes)
	}
}

func nestedSlice(obj map[string]any, fields ...string) ([]any, bool, error) {
	v, ok := lookup(obj, fields)
	s, _ := v.([]any)
	return s, ok, nil
}
