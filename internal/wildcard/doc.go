// Package wildcard matches strings against the glob patterns Argo CD uses in
// projects, cluster lists and resource filters: "*" matches any run of
// characters, slashes included (unlike path.Match), and "?" one character.
// It is the one home of that rule for the packages that cannot import the
// root package.
package wildcard
