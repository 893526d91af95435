package project

import "github.com/kubegitops/gitops/internal/wildcard"

// Glob reports whether s matches pattern, where "*" matches any run of
// characters (slashes included, as in Argo CD's project globs) and "?" one
// character. Everything else matches itself (internal/wildcard, shared
// with the cache's cluster filters).
func Glob(pattern, s string) bool { return wildcard.Match(pattern, s) }

// GlobAny reports whether s matches any of the patterns.
func GlobAny(patterns []string, s string) bool { return wildcard.Any(patterns, s) }
