package rbac

import (
	"fmt"
	"regexp"

	"github.com/gobwas/glob"
)

// MatchMode is how the resource, action and object of a policy line match
// a request (argocd-rbac-cm policy.matchMode).
type MatchMode string

const (
	// MatchGlob (the default) matches with gobwas/glob patterns, Argo CD's
	// dialect: "*" matches any run of characters, "/" included; "?", "[a-z]"
	// and "{a,b}" as in gobwas/glob.
	MatchGlob MatchMode = "glob"
	// MatchRegex matches with Go regular expressions, unanchored (a pattern
	// matches when it matches part of the value), as casbin's regexMatch
	// does in Argo CD.
	MatchRegex MatchMode = "regex"
)

// matcher holds the compiled patterns of every policy line an Enforcer
// loads. It is filled while the Enforcer is built and only read after, so
// concurrent Enforce calls share it safely.
type matcher struct {
	mode    MatchMode
	globs   map[string]glob.Glob
	regexps map[string]*regexp.Regexp
}

func newMatcher(mode MatchMode) *matcher {
	return &matcher{mode: mode, globs: map[string]glob.Glob{}, regexps: map[string]*regexp.Regexp{}}
}

// compile compiles pattern in the matcher's mode and keeps it.
func (m *matcher) compile(pattern string) error {
	if m.mode == MatchRegex {
		if _, ok := m.regexps[pattern]; ok {
			return nil
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return fmt.Errorf("%w: regular expression %q: %v", ErrMalformedLine, pattern, err)
		}
		m.regexps[pattern] = re
		return nil
	}
	if _, ok := m.globs[pattern]; ok {
		return nil
	}
	g, err := glob.Compile(pattern)
	if err != nil {
		return fmt.Errorf("%w: glob %q: %v", ErrMalformedLine, pattern, err)
	}
	m.globs[pattern] = g
	return nil
}

// match reports whether value matches pattern, which compile has seen; a
// pattern it has not seen (none reaches here) matches nothing.
func (m *matcher) match(value, pattern string) bool {
	if m.mode == MatchRegex {
		re, ok := m.regexps[pattern]
		return ok && re.MatchString(value)
	}
	g, ok := m.globs[pattern]
	return ok && g.Match(value)
}

// casbinFunc is the matcher as the model's globOrRegexMatch function:
// globOrRegexMatch(request value, policy pattern).
func (m *matcher) casbinFunc(args ...any) (any, error) {
	if len(args) != 2 {
		return false, fmt.Errorf("globOrRegexMatch: want 2 arguments, got %d", len(args))
	}
	value, ok1 := args[0].(string)
	pattern, ok2 := args[1].(string)
	if !ok1 || !ok2 {
		return false, fmt.Errorf("globOrRegexMatch: want strings, got %T and %T", args[0], args[1])
	}
	return m.match(value, pattern), nil
}
