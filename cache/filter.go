package cache

import (
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/internal/wildcard"
)

// GroupKindMatch matches API kinds by group and kind. "*" matches any
// group or any kind, and within a pattern any run of characters (as in
// Argo CD's resource.exclusions: "*.example.com"); the empty Group is the
// core group ("" never means "any").
type GroupKindMatch struct {
	// Group is the API group pattern: "" the core group, "*" any.
	Group string
	// Kind is the kind pattern; "*" matches any.
	Kind string
	// Clusters, when not empty, limits the match to the clusters whose
	// server URL matches one of these globs ("*" any run of characters,
	// slashes included), as the clusters list of an Argo CD
	// resource.exclusions or resource.inclusions entry does. A filter
	// learns its cluster's URL from Options.Server.
	Clusters []string
}

// Matches reports whether gk is matched, on any cluster the match is not
// limited away from (Clusters is ignored: see MatchesOn).
func (m GroupKindMatch) Matches(gk schema.GroupKind) bool {
	return globMatch(m.Group, gk.Group) && globMatch(m.Kind, gk.Kind)
}

// MatchesOn reports whether gk is matched on the cluster whose server URL
// is server: Clusters is empty or one of its globs matches server.
func (m GroupKindMatch) MatchesOn(gk schema.GroupKind, server string) bool {
	return m.Matches(gk) && (len(m.Clusters) == 0 || wildcard.Any(m.Clusters, server))
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
// wins. Entries limited to some clusters (GroupKindMatch.Clusters) count
// only on those, as in Argo CD: an exclusion for one cluster leaves the
// kind watched on the others, and a cluster that no inclusion entry
// matches watches nothing while Include is not empty.
type ResourceFilter struct {
	// Include, when not empty, are the only kinds watched.
	Include []GroupKindMatch
	// Exclude are kinds never watched, even when included.
	Exclude []GroupKindMatch
}

// Allows reports whether the filter lets gk be watched on a cluster with no
// known server URL (entries limited to clusters match only URLs, so they
// never match there). Caches use AllowsOn with Options.Server.
func (f ResourceFilter) Allows(gk schema.GroupKind) bool { return f.AllowsOn(gk, "") }

// AllowsOn reports whether the filter lets gk be watched on the cluster
// whose server URL is server.
func (f ResourceFilter) AllowsOn(gk schema.GroupKind, server string) bool {
	for _, m := range f.Exclude {
		if m.MatchesOn(gk, server) {
			return false
		}
	}
	if len(f.Include) == 0 {
		return true
	}
	for _, m := range f.Include {
		if m.MatchesOn(gk, server) {
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
