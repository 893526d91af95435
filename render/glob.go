package render

import (
	"path"
	"strings"
)

// MatchGlob reports whether name (a slash-separated path) matches pattern:
// path.Match syntax, plus {a,b,c} alternatives (nested braces allowed).
// A pattern without a slash is also matched against the base name, so
// "*.yaml" selects YAML files at any depth. A malformed pattern matches
// nothing.
func MatchGlob(pattern, name string) bool {
	for _, p := range expandBraces(pattern) {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
		if !strings.Contains(p, "/") {
			if ok, _ := path.Match(p, path.Base(name)); ok {
				return true
			}
		}
	}
	return false
}

// expandBraces turns "a{b,c}d" into ["abd", "acd"].
func expandBraces(p string) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	depth := 0
	var parts []string
	start := open + 1
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				parts = append(parts, p[start:i])
				var out []string
				for _, alt := range parts {
					out = append(out, expandBraces(p[:open]+alt+p[i+1:])...)
				}
				return out
			}
		case ',':
			if depth == 1 {
				parts = append(parts, p[start:i])
				start = i + 1
			}
		}
	}
	return []string{p} // unbalanced: literal
}
