package engine

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/kubegitops/gitops/engine/internal/desired"
)

// TestBuiltinScopesMatchTheCluster: the scopes an offline render assumes
// for built-in kinds (desired.BuiltinScope, from
// resource.BuiltinClusterScoped) are the ones the local cluster's API
// server (Kubernetes 1.37) serves, for every built-in kind it serves.
func TestBuiltinScopesMatchTheCluster(t *testing.T) {
	t.Parallel()
	dc, err := discovery.NewDiscoveryClientForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if r.Name == "" || strings.Contains(r.Name, "/") {
				continue
			}
			namespaced, known := desired.BuiltinScope(schema.GroupKind{Group: gv.Group, Kind: r.Kind})
			if !known {
				continue
			}
			checked++
			if namespaced != r.Namespaced {
				t.Errorf("%s %s: an offline render takes it as namespaced=%v, the API server serves namespaced=%v", l.GroupVersion, r.Kind, namespaced, r.Namespaced)
			}
		}
	}
	if checked < 40 {
		t.Fatalf("only %d built-in kinds checked: the scheme or discovery is not what the test expects", checked)
	}
}
