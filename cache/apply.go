package cache

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubegitops/gitops/resource"
)

// prepare trims obj and builds its entry; it runs before the lock is taken
// when it can, so that the lock is held only for index updates. obj, once
// trimmed, is not kept by the entry (a whole entry keeps its JSON).
func (c *ClusterCache) prepare(w *kindWatch, obj *unstructured.Unstructured) *entry {
	if obj.GetKind() == "" {
		obj.SetGroupVersionKind(w.res.gvk)
	}
	trim(obj, c.opts.KeepManagedFields, c.opts.KeepManagedFieldsOf, c.opts.KeepLastApplied)
	app := c.with.Tracking.AppOf(obj)
	info, whole := c.with.Populate(obj, app)
	return newEntry(obj, app, info, whole)
}

// applyPage stores one list page, recording each key in seen. Once synced,
// it emits events for what changed since the cache last saw the kind.
func (c *ClusterCache) applyPage(w *kindWatch, items []unstructured.Unstructured, seen map[resource.Key]struct{}) {
	entries := make([]*entry, len(items))
	objs := make([]*unstructured.Unstructured, len(items))
	for i := range items {
		objs[i] = &unstructured.Unstructured{Object: items[i].Object}
		entries[i] = c.prepare(w, objs[i])
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range entries {
		seen[e.key] = struct{}{}
		old := c.store.put(e)
		if c.synced {
			switch {
			case old == nil:
				c.emitLocked(EventAdded, e, nil, objs[i])
			case old.resourceVersion != e.resourceVersion:
				c.emitLocked(EventModified, e, old, objs[i])
			}
		}
	}
	c.afterChangeLocked(w.res.gvk.GroupKind())
}

// removeAbsent deletes the objects of w's scope that the last list did not
// return: they were deleted while the kind was not watched.
func (c *ClusterCache) removeAbsent(w *kindWatch, seen map[resource.Key]struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.store.keysOf(w.res.gvk.GroupKind(), w.id.namespace, w.id.namespace == "") {
		if _, ok := seen[k]; ok {
			continue
		}
		if old := c.store.remove(k); old != nil && c.synced {
			c.emitLocked(EventDeleted, old, nil, nil)
		}
	}
}

// dropScope forgets every object of a watch that was stopped because its
// kind left discovery (a CRD deleted) or the options.
func (c *ClusterCache) dropScope(id watchID, gk schema.GroupKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.store.keysOf(gk, id.namespace, id.namespace == "") {
		if old := c.store.remove(k); old != nil && c.synced {
			c.emitLocked(EventDeleted, old, nil, nil)
		}
	}
}

// applyEvent stores one watch event.
func (c *ClusterCache) applyEvent(w *kindWatch, t watch.EventType, obj *unstructured.Unstructured) {
	c.metrics.watchEvents.WithLabelValues(string(t)).Inc()
	if t == watch.Deleted {
		key := resource.KeyOf(obj)
		if key.Kind == "" {
			key.Group, key.Kind = w.res.gvk.Group, w.res.gvk.Kind
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if old := c.store.remove(key); old != nil && c.synced {
			c.emitLocked(EventDeleted, old, nil, nil)
		}
		c.afterChangeLocked(key.GroupKind())
		return
	}
	e := c.prepare(w, obj)
	// SkipUpdate runs outside the lock: it may normalise both versions
	// and judge their health. Only this kind's watch goroutine replaces
	// the entry, and the pointer is checked again under the lock.
	var judged *entry
	skip := false
	if c.with.SkipUpdate != nil && e.whole() {
		c.mu.RLock()
		prev := c.store.byKey[e.key]
		c.mu.RUnlock()
		if prev != nil && prev.whole() && prev.resourceVersion != e.resourceVersion {
			judged, skip = prev, c.with.SkipUpdate(prev.object(), obj)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.store.put(e)
	if c.synced {
		switch {
		case old == nil:
			c.emitLocked(EventAdded, e, nil, obj)
		case skip && old == judged:
			c.metrics.suppressed.Inc()
		default:
			c.emitLocked(EventModified, e, old, obj)
		}
	}
	c.afterChangeLocked(e.key.GroupKind())
}

// afterChangeLocked asks for a discovery refresh when the kinds served may
// have changed.
func (c *ClusterCache) afterChangeLocked(gk schema.GroupKind) {
	if c.synced && (gk == gkCRD || gk == gkAPIService) {
		c.kickDiscovery()
	}
}

// emitLocked queues an event; the caller holds c.mu. fresh is the trimmed
// object e was built from, when the caller has it: a whole entry's event
// carries it rather than a copy decoded again; a lean entry's carries the
// stand-in Get returns. The app of a deleted object is resolved before it
// leaves the indexes (the caller removed only the object itself, its
// owners are still there).
func (c *ClusterCache) emitLocked(t EventType, e, old *entry, fresh *unstructured.Unstructured) {
	if !c.events.active() {
		return
	}
	app := c.store.appOf(e)
	if app == "" && old != nil && old.app != "" {
		app = old.app
	}
	obj := fresh
	if obj == nil || !e.whole() {
		obj = e.object()
	}
	c.events.add(Event{Type: t, Key: e.key, App: app, Object: obj})
}
