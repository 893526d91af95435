package wildcard

import (
	"slices"
	"strings"

	"github.com/gobwas/glob"
)

// metaChars are the characters that make a pattern more than a literal.
const metaChars = `*?[]{}\`

// Compile compiles pattern with the given separators. A literal pattern
// compiles to an exact match without gobwas' compiler.
func Compile(pattern string, separators ...rune) (glob.Glob, error) {
	if !strings.ContainsAny(pattern, metaChars) {
		return literal(pattern), nil
	}
	return glob.Compile(pattern, separators...)
}

// Match reports whether s matches pattern (Argo CD's glob.Match). A
// pattern that does not compile matches nothing.
func Match(pattern, s string, separators ...rune) bool {
	if !strings.ContainsAny(pattern, metaChars) {
		return pattern == s
	}
	if pattern == "*" || pattern == "**" {
		// The patterns of an allow-all project, matched at every refresh:
		// "**" matches everything, "*" everything without a separator.
		return pattern == "**" || !strings.ContainsFunc(s, func(r rune) bool { return slices.Contains(separators, r) })
	}
	g, err := glob.Compile(pattern, separators...)
	return err == nil && g.Match(s)
}

// Any reports whether s matches any of the patterns.
func Any(patterns []string, s string, separators ...rune) bool {
	for _, p := range patterns {
		if Match(p, s, separators...) {
			return true
		}
	}
	return false
}

// IsDeny reports whether pattern is a deny pattern: one that starts with
// "!", as Argo CD's project fields that allow negation read it.
func IsDeny(pattern string) bool { return strings.HasPrefix(pattern, "!") }

// MatchNegatable is Argo CD's globMatch with negation allowed: a deny
// pattern "!p" matches what p does not match, "*" matches everything, and
// any other pattern is Match's.
func MatchNegatable(pattern, s string, separators ...rune) bool {
	if IsDeny(pattern) {
		return !Match(pattern[1:], s, separators...)
	}
	return pattern == "*" || Match(pattern, s, separators...)
}

// literal is a pattern without meta-characters.
type literal string

// Match implements glob.Glob.
func (l literal) Match(s string) bool { return string(l) == s }
