package cache

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Entries limited to clusters count only on the clusters whose URL they
// match, as Argo CD's resource.exclusions and resource.inclusions do.
func TestFilterEntriesLimitedToClusters(t *testing.T) {
	widget := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	cm := schema.GroupKind{Kind: "ConfigMap"}
	ex := ResourceFilter{Exclude: []GroupKindMatch{{Group: "example.com", Kind: "*", Clusters: []string{"https://*.prod.example.net", "https://10.0.0.1:6443"}}}}
	for server, want := range map[string]bool{
		"https://eu.prod.example.net":     false,
		"https://10.0.0.1:6443":           false,
		"https://staging.example.net":     true,
		"https://kubernetes.default.svc":  true,
		"":                                true,
		"https://a/b.prod.example.net":    false, // "*" crosses slashes
		"https://eu.prod.example.net/sub": true,
	} {
		if got := ex.AllowsOn(widget, server); got != want {
			t.Errorf("exclusion on %q: AllowsOn(Widget) = %v, want %v", server, got, want)
		}
		if !ex.AllowsOn(cm, server) {
			t.Errorf("exclusion of example.com on %q excluded ConfigMap", server)
		}
	}
	// An inclusion limited to one cluster: that cluster watches only what
	// it includes, and the others, which no inclusion entry matches,
	// watch nothing (Include is not empty).
	in := ResourceFilter{Include: []GroupKindMatch{{Group: "", Kind: "ConfigMap", Clusters: []string{"https://a.example.net"}}}}
	if !in.AllowsOn(cm, "https://a.example.net") || in.AllowsOn(widget, "https://a.example.net") {
		t.Error("inclusion on its own cluster")
	}
	if in.AllowsOn(cm, "https://b.example.net") {
		t.Error("an inclusion limited to another cluster let ConfigMap in")
	}
	// Exclude wins on the cluster both name.
	both := ResourceFilter{Include: []GroupKindMatch{{Group: "*", Kind: "*"}}, Exclude: []GroupKindMatch{{Group: "", Kind: "ConfigMap", Clusters: []string{"https://a.example.net"}}}}
	if both.AllowsOn(cm, "https://a.example.net") || !both.AllowsOn(cm, "https://b.example.net") {
		t.Error("exclusion limited to a cluster against a global inclusion")
	}
}
