// Package wildcard is the one home of the glob dialect Argo CD uses in
// projects, sync windows, cluster lists, resource filters and RBAC policies:
// github.com/gobwas/glob, as Argo CD's util/glob wraps it. "*" matches any
// run of characters but a separator, "**" any run separators included, "?"
// one character but a separator, "[a-z]" and "[!a-z]" one character of (or
// not of) a class, "{a,b}" one of the alternatives, and "\" escapes the
// next character. Which runes are separators is the caller's choice, per
// field, as in Argo CD: none (so "*" crosses "/") for destinations, cluster
// lists and resource names; '/' for sourceRepos. A pattern without a
// meta-character matches only itself.
package wildcard
