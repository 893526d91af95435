package diff

import (
	"encoding/json"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kindNormalizer rewrites one kind's object (a private copy, already in the
// unstructured form of the pipeline) so that forms the API server or a
// controller treats as equal compare equal.
type kindNormalizer func(obj map[string]any)

// kindNormalizers returns the per-kind rules of Argo CD's normaliser, for
// the options given:
//
//   - Role and ClusterRole: an empty rules list is the same as none (the
//     server stores both as null). With Options.IgnoreAggregatedRoles, a
//     ClusterRole with an aggregationRule has its rules ignored: the
//     aggregation controller writes them from the roles it selects.
//   - Endpoints: a port without protocol is TCP, and the order of subsets,
//     of their addresses, not-ready addresses and ports carries no meaning
//     (the endpoints controller writes them sorted; a manifest or a
//     generator may list them in any order).
func kindNormalizers(opts Options) map[schema.GroupKind]kindNormalizer {
	role := func(obj map[string]any) { normalizeRole(obj, false) }
	clusterRole := func(obj map[string]any) { normalizeRole(obj, opts.IgnoreAggregatedRoles) }
	return map[schema.GroupKind]kindNormalizer{
		{Group: "rbac.authorization.k8s.io", Kind: "Role"}:        role,
		{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: clusterRole,
		{Group: "", Kind: "Endpoints"}:                            normalizeEndpoints,
	}
}

// normalizeRole drops an empty rules list, and every rule of an aggregated
// role when ignoreAggregated is set.
func normalizeRole(obj map[string]any, ignoreAggregated bool) {
	if ignoreAggregated {
		if _, ok := obj["aggregationRule"].(map[string]any); ok {
			delete(obj, "rules")
			return
		}
	}
	if rules, ok := obj["rules"].([]any); ok && len(rules) == 0 {
		delete(obj, "rules")
	}
}

// normalizeEndpoints defaults each port's protocol to TCP and sorts each
// subset's addresses, not-ready addresses and ports, then the subsets, by a
// canonical form: the same set written in another order compares equal.
func normalizeEndpoints(obj map[string]any) {
	subsets, ok := obj["subsets"].([]any)
	if !ok {
		return
	}
	for _, s := range subsets {
		subset, ok := s.(map[string]any)
		if !ok {
			continue
		}
		if ports, ok := subset["ports"].([]any); ok {
			for _, p := range ports {
				if port, ok := p.(map[string]any); ok {
					if proto, _ := port["protocol"].(string); proto == "" {
						port["protocol"] = "TCP"
					}
				}
			}
			sortCanonical(ports)
		}
		for _, f := range [...]string{"addresses", "notReadyAddresses"} {
			if list, ok := subset[f].([]any); ok {
				sortCanonical(list)
			}
		}
	}
	sortCanonical(subsets)
}

// sortCanonical sorts list in place by the JSON form of each item
// (encoding/json writes map keys sorted, so equal items have equal forms).
// An address sorts by its ip first, which leads its form.
func sortCanonical(list []any) {
	if len(list) < 2 {
		return
	}
	keys := make([]string, len(list))
	for i, v := range list {
		keys[i] = canonicalKey(v)
	}
	idx := make([]int, len(list))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	sorted := make([]any, len(list))
	for i, j := range idx {
		sorted[i] = list[j]
	}
	copy(list, sorted)
}

func canonicalKey(v any) string {
	if m, ok := v.(map[string]any); ok {
		// An address's ip, and a port's port and name, lead the key so
		// that the order reads naturally in a diff.
		lead := ""
		for _, f := range [...]string{"ip", "name"} {
			if s, ok := m[f].(string); ok {
				lead += s + "\x00"
			}
		}
		b, _ := json.Marshal(m)
		return lead + string(b)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
