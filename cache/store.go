package cache

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegitops/gitops/resource"
)

type keySet map[resource.Key]struct{}

// store holds the entries and every index over them. It is not safe for
// concurrent use; ClusterCache guards it with its lock. Every index is kept
// exact on put and remove, so that a query costs O(its answer), never
// O(cache size).
type store struct {
	byKey       map[resource.Key]*entry
	byUID       map[types.UID]resource.Key
	byApp       map[string]keySet
	byNamespace map[string]keySet
	byKind      map[schema.GroupKind]keySet
	byOwner     map[types.UID]keySet
	// byInferred maps a parent key to the children that name it without an
	// ownerReference, with the claim template each needs ("" for none).
	byInferred map[resource.Key]map[resource.Key]string
	whole      int
}

func newStore() *store {
	return &store{
		byKey:       map[resource.Key]*entry{},
		byUID:       map[types.UID]resource.Key{},
		byApp:       map[string]keySet{},
		byNamespace: map[string]keySet{},
		byKind:      map[schema.GroupKind]keySet{},
		byOwner:     map[types.UID]keySet{},
		byInferred:  map[resource.Key]map[resource.Key]string{},
	}
}

func addTo[K comparable](idx map[K]keySet, k K, key resource.Key) {
	s, ok := idx[k]
	if !ok {
		s = keySet{}
		idx[k] = s
	}
	s[key] = struct{}{}
}

func removeFrom[K comparable](idx map[K]keySet, k K, key resource.Key) {
	if s, ok := idx[k]; ok {
		delete(s, key)
		if len(s) == 0 {
			delete(idx, k)
		}
	}
}

// put stores e, replacing and returning the entry of the same key, if any.
func (s *store) put(e *entry) *entry {
	old := s.remove(e.key)
	s.byKey[e.key] = e
	if e.uid != "" {
		s.byUID[e.uid] = e.key
	}
	if e.app != "" {
		addTo(s.byApp, e.app, e.key)
	}
	addTo(s.byNamespace, e.key.Namespace, e.key)
	addTo(s.byKind, e.key.GroupKind(), e.key)
	for _, o := range e.owners {
		addTo(s.byOwner, o.UID, e.key)
	}
	for _, p := range e.inferredParents {
		m, ok := s.byInferred[p.parent]
		if !ok {
			m = map[resource.Key]string{}
			s.byInferred[p.parent] = m
		}
		m[e.key] = p.template
	}
	if e.obj != nil {
		s.whole++
	}
	return old
}

// remove deletes the entry of key from every index and returns it.
func (s *store) remove(key resource.Key) *entry {
	e, ok := s.byKey[key]
	if !ok {
		return nil
	}
	delete(s.byKey, key)
	if e.uid != "" && s.byUID[e.uid] == key {
		delete(s.byUID, e.uid)
	}
	if e.app != "" {
		removeFrom(s.byApp, e.app, key)
	}
	removeFrom(s.byNamespace, key.Namespace, key)
	removeFrom(s.byKind, key.GroupKind(), key)
	for _, o := range e.owners {
		removeFrom(s.byOwner, o.UID, key)
	}
	for _, p := range e.inferredParents {
		if m, ok := s.byInferred[p.parent]; ok {
			delete(m, key)
			if len(m) == 0 {
				delete(s.byInferred, p.parent)
			}
		}
	}
	if e.obj != nil {
		s.whole--
	}
	return e
}

// keysOf returns the keys of kind gk in namespace ns ("" with all true:
// every namespace).
func (s *store) keysOf(gk schema.GroupKind, ns string, all bool) []resource.Key {
	var out []resource.Key
	for k := range s.byKind[gk] {
		if all || k.Namespace == ns {
			out = append(out, k)
		}
	}
	return out
}
