package project

import (
	"regexp"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"

	"github.com/kubegitops/gitops/internal/wildcard"
)

// Glob reports whether s matches pattern in Argo CD's glob dialect
// (gobwas/glob, through internal/wildcard) without separators, as Argo CD
// matches destinations, sync windows and resource kinds and names: "*"
// matches any run of characters, slashes included, "?" one character,
// "[a-z]" a class, "{a,b}" an alternative.
func Glob(pattern, s string) bool { return wildcard.Match(pattern, s) }

// GlobAny reports whether s matches any of the patterns.
func GlobAny(patterns []string, s string) bool { return wildcard.Any(patterns, s) }

// NamespacePermitted is Argo CD's rule for a project's sourceNamespaces:
// a namespace is permitted when it matches any pattern as a glob (Glob),
// or any pattern written between slashes ("/^team-[a-z]+$/") as a
// regular expression, which matches anywhere in the namespace unless
// anchored. Expressions are Go's (RE2): Argo CD's regexp2 dialect also has
// lookarounds and backreferences, and a project using them fails
// AppProject.Validate; an expression that does not compile matches
// nothing.
func NamespacePermitted(patterns []string, ns string) bool {
	for _, p := range patterns {
		if expr, ok := v1alpha1.SlashRegexp(p); ok {
			if re, err := regexp.Compile(expr); err == nil && re.MatchString(ns) {
				return true
			}
		}
		if Glob(p, ns) {
			return true
		}
	}
	return false
}

// SourcePermitted is Argo CD's sourceRepos rule (AppProject's
// IsSourcePermitted): each pattern is a glob with '/' as its separator
// ("*" and "?" stay within one path segment, "**" crosses them), and
// patterns and URL are compared normalised (lower case, without a ".git"
// suffix). A deny pattern "!p" refuses a URL p matches, and counts as a
// match of any other URL, as in Argo CD; "*" permits any URL.
func SourcePermitted(patterns []string, repoURL string) bool {
	url := normalizeRepoURL(repoURL)
	permitted := false
	for _, p := range patterns {
		deny := wildcard.IsDeny(p)
		norm := normalizeRepoURL(strings.TrimPrefix(p, "!"))
		if deny {
			norm = "!" + norm
		}
		switch {
		case wildcard.MatchNegatable(norm, url, '/'):
			permitted = true
		case deny:
			return false
		}
	}
	return permitted
}

// normalizeRepoURL is the form of a repository URL sourceRepos compares:
// trimmed, lower case, without ".git".
func normalizeRepoURL(u string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(u)), ".git")
}
