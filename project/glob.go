package project

import (
	"strings"

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
