package resource

import (
	"bytes"
	"fmt"

	yamlv3 "go.yaml.in/yaml/v3"
)

// checkAliasExpansion refuses a YAML document whose aliases would expand to
// more than limit extra nodes. It parses the document into a node tree, which
// keeps each alias as a pointer to its anchor, and sums the expanded size of
// every node once (memoised), so its cost is linear in the document's size
// however deep the nesting of anchors. A document without both '&' and '*'
// cannot hold an alias and costs a byte scan only.
func checkAliasExpansion(doc []byte, limit int) error {
	if bytes.IndexByte(doc, '&') < 0 || bytes.IndexByte(doc, '*') < 0 {
		return nil
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &root); err != nil {
		// The converter reports syntax errors with kubectl's wording; let it.
		return nil
	}
	c := aliasCounter{memo: map[*yamlv3.Node]int{}, onPath: map[*yamlv3.Node]bool{}, cap: limit + len(doc) + 1}
	expanded, err := c.size(&root)
	if err != nil {
		return err
	}
	if extra := expanded - c.plain; extra > limit {
		return fmt.Errorf("%w: aliases add more than %d nodes", ErrAliasExpansion, limit)
	}
	return nil
}

type aliasCounter struct {
	memo   map[*yamlv3.Node]int
	onPath map[*yamlv3.Node]bool
	plain  int // nodes in the tree, each counted once
	cap    int // sizes saturate here so sums never overflow
}

func (c *aliasCounter) size(n *yamlv3.Node) (int, error) {
	if n == nil {
		return 0, nil
	}
	if s, ok := c.memo[n]; ok {
		return s, nil
	}
	if c.onPath[n] {
		return 0, fmt.Errorf("%w: an anchor refers to itself", ErrAliasExpansion)
	}
	c.onPath[n] = true
	defer delete(c.onPath, n)
	total := 1
	c.plain++
	if n.Kind == yamlv3.AliasNode {
		s, err := c.size(n.Alias)
		if err != nil {
			return 0, err
		}
		total = c.add(total, s)
	}
	for _, child := range n.Content {
		s, err := c.size(child)
		if err != nil {
			return 0, err
		}
		total = c.add(total, s)
	}
	c.memo[n] = total
	return total, nil
}

func (c *aliasCounter) add(a, b int) int {
	if a+b > c.cap {
		return c.cap
	}
	return a + b
}
