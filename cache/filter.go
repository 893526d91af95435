package cache

import (
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupKindMatch matches API kinds by group and kind. "*" matches any
// group or any kind, and within a pattern any run of characters (as in
// Argo CD's resource.exclusions: "*.example.com"); the empty Group is the
// core group ("" never means "any").
type GroupKindMatch struct {
	Group string
	Kind  string
}

// Matches reports whether gk is matched.
func (m GroupKindMatch) Matches(gk schema.GroupKind) bool {
	return globMatch(m.Group, gk.Group) && globMatch(m.Kind, gk.Kind)
}

func globMatch(pattern, s string) bool {
	if pattern == "*" || pattern == s {
		return true
	}
	if !strings.ContainsAny(pattern, "*?[") {
		return false
	}
	ok, _ := path.Match(pattern, s)
	return ok
}

// ResourceFilter chooses the kinds the cache watches. A kind is watched when
// Include is empty or matches it, and Exclude does not match it: Exclude
// wins.
type ResourceFilter struct {
	Include []GroupKindMatch
	Exclude []GroupKindMatch
}

// Allows reports whether the filter lets gk be watched.
func (f ResourceFilter) Allows(gk schema.GroupKind) bool {
	for _, m := range f.Exclude {
		if m.Matches(gk) {
			return false
		}
	}
	if len(f.Include) == 0 {
		return true
	}
	for _, m := range f.Include {
		if m.Matches(gk) {
			return true
		}
	}
	return false
}

// DefaultExclusions are the kinds left out of the cache by default: they
// churn constantly, are never managed from Git, or cannot be listed at all.
//
//   - core Event and events.k8s.io: a busy cluster writes thousands a minute;
//   - coordination.k8s.io Lease: leader election and node heartbeats renew
//     them every few seconds;
//   - metrics.k8s.io: computed on every read, not stored, not watchable;
//   - authentication.k8s.io and authorization.k8s.io: create-only reviews;
//   - core ComponentStatus: deprecated, computed on read.
func DefaultExclusions() []GroupKindMatch {
	return []GroupKindMatch{
		{Group: "", Kind: "Event"},
		{Group: "events.k8s.io", Kind: "*"},
		{Group: "coordination.k8s.io", Kind: "Lease"},
		{Group: "metrics.k8s.io", Kind: "*"},
		{Group: "authentication.k8s.io", Kind: "*"},
		{Group: "authorization.k8s.io", Kind: "*"},
		{Group: "", Kind: "ComponentStatus"},
	}
}
