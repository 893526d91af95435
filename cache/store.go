package cache

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegitops/gitops/resource"
)

type keySet map[resource.Key]struct{}

// entrySet is a set of entries. Sets hold pointers (8 bytes) rather than
// keys (64 bytes): with four set indexes that is about a fifth of a lean
// entry's cost.
type entrySet map[*entry]struct{}

// store holds the entries and every index over them. It is not safe for
// concurrent use; ClusterCache guards it with its lock. Every index is kept
// exact on put and remove, so that a query costs O(its answer), never
// O(cache size).
type store struct {
	byKey       map[resource.Key]*entry
	byUID       map[types.UID]*entry
	byApp       map[string]entrySet
	byNamespace map[string]entrySet
	byKind      map[schema.GroupKind]entrySet
	byOwner     map[types.UID]entrySet
	// byInferred maps a parent key to the children that name it without an
	// ownerReference, with the claim template each needs ("" for none).
	byInferred map[resource.Key]map[resource.Key]string
	whole      int
}

func newStore() *store {
	return &store{
		byKey:       map[resource.Key]*entry{},
		byUID:       map[types.UID]*entry{},
		byApp:       map[string]entrySet{},
		byNamespace: map[string]entrySet{},
		byKind:      map[schema.GroupKind]entrySet{},
		byOwner:     map[types.UID]entrySet{},
		byInferred:  map[resource.Key]map[resource.Key]string{},
	}
}

func addTo[K comparable](idx map[K]entrySet, k K, e *entry) {
	s, ok := idx[k]
	if !ok {
		s = entrySet{}
		idx[k] = s
	}
	s[e] = struct{}{}
}

func removeFrom[K comparable](idx map[K]entrySet, k K, e *entry) {
	if s, ok := idx[k]; ok {
		delete(s, e)
		if len(s) == 0 {
			delete(idx, k)
		}
	}
}

// put stores e, replacing and returning the entry of the same key, if any.
func (s *store) put(e *entry) *entry {
	old := s.remove(e.key)
	if old != nil {
		e.adopt(old)
	}
	s.byKey[e.key] = e
	if e.uid != "" {
		s.byUID[e.uid] = e
	}
	if e.app != "" {
		addTo(s.byApp, e.app, e)
	}
	addTo(s.byNamespace, e.key.Namespace, e)
	addTo(s.byKind, e.key.GroupKind(), e)
	for _, o := range e.owners {
		addTo(s.byOwner, o.UID, e)
	}
	for _, p := range e.inferredParents() {
		m, ok := s.byInferred[p.parent]
		if !ok {
			m = map[resource.Key]string{}
			s.byInferred[p.parent] = m
		}
		m[e.key] = p.template
	}
	if e.whole() {
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
	if e.uid != "" && s.byUID[e.uid] == e {
		delete(s.byUID, e.uid)
	}
	if e.app != "" {
		removeFrom(s.byApp, e.app, e)
	}
	removeFrom(s.byNamespace, key.Namespace, e)
	removeFrom(s.byKind, key.GroupKind(), e)
	for _, o := range e.owners {
		removeFrom(s.byOwner, o.UID, e)
	}
	for _, p := range e.inferredParents() {
		if m, ok := s.byInferred[p.parent]; ok {
			delete(m, key)
			if len(m) == 0 {
				delete(s.byInferred, p.parent)
			}
		}
	}
	if e.whole() {
		s.whole--
	}
	return e
}

// keysOf returns the keys of kind gk in namespace ns ("" with all true:
// every namespace).
func (s *store) keysOf(gk schema.GroupKind, ns string, all bool) []resource.Key {
	var out []resource.Key
	for e := range s.byKind[gk] {
		if all || e.key.Namespace == ns {
			out = append(out, e.key)
		}
	}
	return out
}

// entriesIn returns the entries of set, sorted by key. Entries never change
// once stored, so the caller may read them after releasing the lock.
func entriesIn(set entrySet) []*entry {
	out := make([]*entry, 0, len(set))
	for e := range set {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *entry) int { return compareKeys(a.key, b.key) })
	return out
}

// keysIn returns the keys of the entries of set, sorted.
func keysIn(set entrySet) []resource.Key {
	out := make([]resource.Key, 0, len(set))
	for e := range set {
		out = append(out, e.key)
	}
	sortKeys(out)
	return out
}
