package v1alpha1

import (
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestResourceTreeIsBounded: a tree of more than MaxTreeNodes nodes keeps
// the first MaxTreeNodes and counts the rest; one within the bound is
// kept whole; both survive a round trip through the Application's YAML.
func TestResourceTreeIsBounded(t *testing.T) {
	nodes := make([]ResourceNode, MaxTreeNodes+250)
	for i := range nodes {
		nodes[i].Kind, nodes[i].Name = "Pod", fmt.Sprintf("web-%d", i)
	}
	tree := NewApplicationTree(nodes)
	if len(tree.Nodes) != MaxTreeNodes || tree.Truncated != 250 || tree.Nodes[0].Name != "web-0" {
		t.Fatalf("tree of %d: %d nodes, %d truncated", len(nodes), len(tree.Nodes), tree.Truncated)
	}
	if small := NewApplicationTree(nodes[:3]); len(small.Nodes) != 3 || small.Truncated != 0 {
		t.Errorf("small tree: %d nodes, %d truncated", len(small.Nodes), small.Truncated)
	}
	app := Application{Status: ApplicationStatus{ResourceTree: tree}}
	out, err := yaml.Marshal(&app)
	if err != nil {
		t.Fatal(err)
	}
	var back Application
	if err := yaml.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if rt := back.Status.ResourceTree; rt == nil || len(rt.Nodes) != MaxTreeNodes || rt.Truncated != 250 {
		t.Errorf("round trip lost the tree")
	}
}
