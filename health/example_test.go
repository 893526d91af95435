package health_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/health"
)

// A host adds a Lua check for its own kind (written exactly as for Argo CD)
// and judges objects and an application.
func ExampleNewChecker() {
	opts := health.DefaultOptions()
	opts.Overrides = map[string]string{
		"example.com/Widget": `
hs = {}
if obj.status ~= nil and obj.status.phase == "Running" then
  hs.status = "Healthy"
  hs.message = "widget is running"
  return hs
end
hs.status = "Progressing"
hs.message = "waiting for the widget"
return hs`,
	}
	checker, err := health.NewChecker(opts)
	if err != nil {
		panic(err)
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "shop"},
		"status":   map[string]any{"phase": "Starting"},
	}}
	st, err := checker.Check(widget)
	if err != nil {
		panic(err)
	}
	fmt.Println(st)

	app := health.Aggregate([]health.ResourceHealth{health.ResourceHealthOf(widget, st)}, health.DefaultAggregateOptions())
	fmt.Println(app)
	// Output:
	// Progressing: waiting for the widget
	// Progressing: Caused by example.com/Widget shop/w: waiting for the widget
}
