package strictload

import (
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// lineIndex finds the line of a field path ("spec.sources[1].helm") in a
// YAML document.
type lineIndex struct {
	root  *yamlv3.Node
	first int
}

func newLineIndex(body []byte, firstLine int) lineIndex {
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(body, &root); err != nil || len(root.Content) == 0 {
		return lineIndex{first: firstLine}
	}
	return lineIndex{root: root.Content[0], first: firstLine}
}

// of returns the line of the deepest node on path that exists, counted in
// the whole stream; the document's first line when none does.
func (l lineIndex) of(path string) int {
	if l.root == nil {
		return l.first
	}
	n, line := l.root, l.root.Line
	for _, tok := range splitPath(path) {
		next := child(n, tok)
		if next == nil {
			break
		}
		n, line = next, next.Line
	}
	return l.first + line - 1
}

func splitPath(path string) []string {
	var toks []string
	for _, part := range strings.Split(path, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				toks = append(toks, part)
				break
			}
			if i > 0 {
				toks = append(toks, part[:i])
			}
			j := strings.IndexByte(part, ']')
			if j < i {
				break
			}
			toks = append(toks, part[i:j+1])
			part = part[j+1:]
		}
	}
	return toks
}

func child(n *yamlv3.Node, tok string) *yamlv3.Node {
	for n.Kind == yamlv3.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == tok {
				return keyOrValue(n.Content[i], n.Content[i+1])
			}
		}
	case yamlv3.SequenceNode:
		if strings.HasPrefix(tok, "[") {
			idx, err := strconv.Atoi(strings.Trim(tok, "[]"))
			if err == nil && idx >= 0 && idx < len(n.Content) {
				return n.Content[idx]
			}
		}
	}
	return nil
}

// keyOrValue returns the value node, but with the key's line when the
// value is a block starting on a later line, so errors point at the key.
func keyOrValue(key, value *yamlv3.Node) *yamlv3.Node {
	if value.Kind == yamlv3.MappingNode || value.Kind == yamlv3.SequenceNode {
		c := *value
		c.Line = key.Line
		return &c
	}
	return value
}
