package v1alpha1

// NewApplicationTree returns the tree of nodes (parents before children),
// bounded: at most MaxTreeNodes nodes are kept, and Truncated counts the
// rest, so that the status of an app with thousands of Pods stays small.
// The nodes are not copied.
func NewApplicationTree(nodes []ResourceNode) *ApplicationTree {
	t := &ApplicationTree{Nodes: nodes}
	if len(nodes) > MaxTreeNodes {
		t.Nodes = nodes[:MaxTreeNodes:MaxTreeNodes]
		t.Truncated = int64(len(nodes) - MaxTreeNodes)
	}
	return t
}
