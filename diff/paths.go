package diff

import (
	"sort"
	"strconv"
)

// fieldPath is a path into a JSON-like value: map keys and list indexes,
// both as text (as in a JSON pointer).
type fieldPath []string

// lookup returns the value at p.
func lookup(root any, p fieldPath) (any, bool) {
	cur := root
	for _, tok := range p {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// remove deletes the value at p (a list item is cut out of its list) and
// returns it. The root itself is never removed.
func remove(root any, p fieldPath) (any, bool) {
	if len(p) == 0 {
		return nil, false
	}
	parent, ok := lookup(root, p[:len(p)-1])
	if !ok {
		return nil, false
	}
	last := p[len(p)-1]
	switch c := parent.(type) {
	case map[string]any:
		v, ok := c[last]
		if ok {
			delete(c, last)
		}
		return v, ok
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		v := c[i]
		// Cut in place, then shorten the slice held by the grandparent.
		copy(c[i:], c[i+1:])
		c[len(c)-1] = nil
		return v, setList(root, p[:len(p)-1], c[:len(c)-1])
	}
	return nil, false
}

// setList stores list at p, whose parent must exist.
func setList(root any, p fieldPath, list []any) bool {
	if len(p) == 0 {
		return false
	}
	parent, ok := lookup(root, p[:len(p)-1])
	if !ok {
		return false
	}
	last := p[len(p)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = list
		return true
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(c) {
			return false
		}
		c[i] = list
		return true
	}
	return false
}

// restore puts v back at p, whose parent must exist: into a map by key, into
// a list at its index (inserted, so that restoring removed items in
// ascending order rebuilds the list).
func restore(root any, p fieldPath, v any) bool {
	if len(p) == 0 {
		return false
	}
	parent, ok := lookup(root, p[:len(p)-1])
	if !ok {
		return false
	}
	last := p[len(p)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = v
		return true
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i > len(c) {
			return false
		}
		c = append(c, nil)
		copy(c[i+1:], c[i:])
		c[i] = v
		return setList(root, p[:len(p)-1], c)
	}
	return false
}

// sortPathsForRemoval orders paths so that removing them one by one never
// shifts a list index still to be removed: deeper and later items first.
func sortPathsForRemoval(paths []fieldPath) {
	sort.SliceStable(paths, func(i, j int) bool { return comparePaths(paths[i], paths[j]) > 0 })
}

// comparePaths orders paths token by token, list indexes numerically.
func comparePaths(a, b fieldPath) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		ai, aerr := strconv.Atoi(a[i])
		bi, berr := strconv.Atoi(b[i])
		if aerr == nil && berr == nil {
			if ai < bi {
				return -1
			}
			return 1
		}
		if a[i] < b[i] {
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// dedupePaths drops repeated paths and paths under another path of the set
// (removing the parent removes them).
func dedupePaths(paths []fieldPath) []fieldPath {
	sort.SliceStable(paths, func(i, j int) bool { return comparePaths(paths[i], paths[j]) < 0 })
	out := paths[:0]
	for _, p := range paths {
		if len(out) > 0 && hasPrefix(p, out[len(out)-1]) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func hasPrefix(p, prefix fieldPath) bool {
	if len(prefix) > len(p) {
		return false
	}
	for i := range prefix {
		if p[i] != prefix[i] {
			return false
		}
	}
	return true
}
