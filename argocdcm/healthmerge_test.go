package argocdcm

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/health"
)

// TestArgoCDSettingsApply_MergesHostHealthOverrides shows that a host's Lua
// health overrides and argocd-cm's resource.customizations.health.* judge
// together: each kind keeps the script given for it, and on a kind both
// give a script for (in any key spelling), argocd-cm's wins, as Argo CD's
// argocd-cm customizations win over the scripts it ships.
func TestArgoCDSettingsApply_MergesHostHealthOverrides(t *testing.T) {
	hopts := health.DefaultOptions()
	hopts.Overrides = map[string]string{
		"example.com/Widget": `return {status = "Suspended", message = "host widget"}`,
		"example.com/Gadget": `return {status = "Degraded", message = "host gadget"}`,
	}
	host, err := health.NewChecker(hopts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(map[string]string{
		"resource.customizations.health.example.com_Gadget": `return {status = "Healthy", message = "argocd-cm gadget"}`,
		"resource.customizations.health.example.com_Gizmo":  `return {status = "Progressing", message = "argocd-cm gizmo"}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := engine.DefaultOptions()
	opts.Health = host
	if err := s.Apply(&opts); err != nil {
		t.Fatalf("Apply with a host health checker: %v", err)
	}
	for kind, want := range map[string]string{"Widget": "host widget", "Gadget": "argocd-cm gadget", "Gizmo": "argocd-cm gizmo"} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": kind,
			"metadata": map[string]any{"name": "x", "namespace": "ns"}}}
		st, err := opts.Health.Check(obj)
		if err != nil || st == nil || st.Message != want {
			t.Errorf("%s: health %+v, %v; want %q", kind, st, err, want)
		}
	}
	// The host's checker is not changed: Apply built another.
	if st, _ := host.Check(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "x"}}}); st == nil || st.Message != "host gadget" {
		t.Errorf("host checker changed: %+v", st)
	}
}
