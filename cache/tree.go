package cache

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/resource"
)

// labelServiceName is the label an EndpointSlice carries naming its Service.
const labelServiceName = "kubernetes.io/service-name"

// inferParents returns, for obj, the claim templates it declares (a
// StatefulSet) and the parents it names without an ownerReference:
//
//   - core Endpoints -> the Service of the same namespace and name;
//   - discovery.k8s.io EndpointSlice -> the Service named by its
//     kubernetes.io/service-name label;
//   - core PersistentVolumeClaim named "<template>-<statefulset>-<ordinal>"
//     -> that StatefulSet, if it declares the claim template. Names with
//     dashes can be cut in several places, so each cut is a candidate and
//     the StatefulSet's own templates pick the right one at query time.
func inferParents(obj *unstructured.Unstructured, key resource.Key) (templates []string, parents []inferredParent) {
	switch {
	case key.Group == "apps" && key.Kind == "StatefulSet":
		tpls, _, _ := unstructured.NestedSlice(obj.Object, "spec", "volumeClaimTemplates")
		for _, t := range tpls {
			if m, ok := t.(map[string]any); ok {
				if name, _, _ := unstructured.NestedString(m, "metadata", "name"); name != "" {
					templates = append(templates, name)
				}
			}
		}
	case key.Group == "" && key.Kind == "Endpoints":
		parents = append(parents, inferredParent{parent: resource.Key{Kind: "Service", Namespace: key.Namespace, Name: key.Name}})
	case key.Group == "discovery.k8s.io" && key.Kind == "EndpointSlice":
		if svc := obj.GetLabels()[labelServiceName]; svc != "" {
			parents = append(parents, inferredParent{parent: resource.Key{Kind: "Service", Namespace: key.Namespace, Name: svc}})
		}
	case key.Group == "" && key.Kind == "PersistentVolumeClaim":
		parents = pvcCandidates(key)
	}
	return templates, parents
}

// pvcCandidates returns every (template, StatefulSet) a PVC name could
// stand for.
func pvcCandidates(key resource.Key) []inferredParent {
	i := strings.LastIndexByte(key.Name, '-')
	if i <= 0 || i == len(key.Name)-1 {
		return nil
	}
	for _, r := range key.Name[i+1:] {
		if r < '0' || r > '9' {
			return nil
		}
	}
	prefix := key.Name[:i]
	var out []inferredParent
	for j := 0; j < len(prefix); j++ {
		if prefix[j] != '-' || j == 0 || j == len(prefix)-1 {
			continue
		}
		out = append(out, inferredParent{
			parent:   resource.Key{Group: "apps", Kind: "StatefulSet", Namespace: key.Namespace, Name: prefix[j+1:]},
			template: prefix[:j],
		})
	}
	return out
}

// children returns the keys of the objects whose ownerReferences name the
// object of key (by UID, so across namespaces too) and of those that name it
// by inference, sorted by their String form. Cost: O(children).
func (s *store) children(key resource.Key) []resource.Key {
	e, ok := s.byKey[key]
	if !ok {
		return nil
	}
	seen := keySet{}
	var out []resource.Key
	if e.uid != "" {
		for c := range s.byOwner[e.uid] {
			if k := c.key; !seenHas(seen, k) && k != key {
				seen[k] = struct{}{}
				out = append(out, k)
			}
		}
	}
	for k, tpl := range s.byInferred[key] {
		if _, dup := seen[k]; dup || k == key {
			continue
		}
		if _, exists := s.byKey[k]; !exists {
			continue
		}
		if tpl != "" && !contains(e.claimTemplates(), tpl) {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, k)
	}
	sortKeys(out)
	return out
}

// tree returns key followed by all its descendants, breadth first. Each
// object appears once however many paths lead to it, so ownership cycles
// (which the API server does not forbid) end the walk instead of looping.
func (s *store) tree(key resource.Key) []resource.Key {
	if _, ok := s.byKey[key]; !ok {
		return nil
	}
	visited := keySet{key: {}}
	out := []resource.Key{key}
	for i := 0; i < len(out); i++ {
		for _, c := range s.children(out[i]) {
			if _, ok := visited[c]; ok {
				continue
			}
			visited[c] = struct{}{}
			out = append(out, c)
		}
	}
	return out
}

// appOf returns the application of e, or of its nearest tracked ancestor,
// walking controller owners (then any owner) at most maxDepth levels, so
// that an event on a Pod can be routed to the app that owns its Deployment.
func (s *store) appOf(e *entry) string {
	const maxDepth = 8
	for depth := 0; e != nil && depth < maxDepth; depth++ {
		if e.app != "" {
			return e.app
		}
		var next *entry
		for _, o := range e.owners {
			if p := s.byUID[o.UID]; p != nil && (next == nil || o.Controller) {
				next = p
			}
		}
		if next == nil {
			for _, p := range e.inferredParents() {
				if pe := s.byKey[p.parent]; pe != nil && (p.template == "" || contains(pe.claimTemplates(), p.template)) {
					next = pe
					break
				}
			}
		}
		e = next
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sortKeys sorts keys as compareKeys orders them.
func sortKeys(keys []resource.Key) {
	slices.SortFunc(keys, compareKeys)
}

// compareKeys orders keys by group, kind, namespace and name.
func compareKeys(a, b resource.Key) int {
	return cmp.Or(
		strings.Compare(a.Group, b.Group),
		strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Namespace, b.Namespace),
		strings.Compare(a.Name, b.Name),
	)
}

func seenHas(seen keySet, k resource.Key) bool {
	_, ok := seen[k]
	return ok
}
