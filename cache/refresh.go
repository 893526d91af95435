package cache

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kinds whose changes mean the set of API kinds may have changed.
var (
	gkCRD        = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	gkAPIService = schema.GroupKind{Group: "apiregistration.k8s.io", Kind: "APIService"}
)

// refresh runs discovery and makes the running watches match it: new kinds
// (after an access check) get a watch, vanished kinds lose theirs and their
// objects. It returns a channel per new watch that closes after the watch's
// first list attempt.
func (c *ClusterCache) refresh(ctx context.Context) ([]<-chan struct{}, error) {
	d, err := discover(c.disc)
	if err != nil {
		return nil, err
	}
	desired := c.opts.desiredWatches(d.resources)

	c.mu.Lock()
	c.apiLists = d.lists
	c.serverVersion = d.version
	for id := range c.taints {
		if id.gvr.Resource == "" {
			delete(c.taints, id)
		}
	}
	for gv, gerr := range d.failed {
		id := watchID{gvr: gv.WithResource("")}
		c.taints[id] = &KindError{GVK: gv.WithKind(""), Reason: ReasonDiscoveryFailed, Err: gerr}
	}
	c.mu.Unlock()

	c.watchMu.Lock()
	defer c.watchMu.Unlock()

	var todo []watchID
	for id := range desired {
		if _, running := c.watches[id]; !running {
			todo = append(todo, id)
		}
	}
	denied := map[watchID]error{}
	if c.opts.RespectRBAC && len(todo) > 0 {
		denied = checkAccess(ctx, c.review, todo, c.opts.ListConcurrency)
	}
	var firsts []<-chan struct{}
	for _, id := range todo {
		r := desired[id]
		if err := denied[id]; err != nil {
			c.setTaint(id, &KindError{GVK: r.gvk, Namespace: id.namespace, Reason: ReasonForbidden, Err: err})
			continue
		}
		c.clearForbidden(id)
		w := newKindWatch(ctx, c, id, r)
		c.watches[id] = w
		firsts = append(firsts, w.firstDone)
		go w.run()
	}
	for id, w := range c.watches {
		if _, keep := desired[id]; keep {
			continue
		}
		w.stop()
		delete(c.watches, id)
		c.dropScope(id, w.res.gvk.GroupKind())
		c.clearTaint(id)
	}
	// Forget forbidden kinds that are no longer desired at all.
	c.mu.Lock()
	for id, e := range c.taints {
		if _, want := desired[id]; !want && e.Reason == ReasonForbidden {
			delete(c.taints, id)
		}
	}
	c.mu.Unlock()
	c.metrics.watches.Set(float64(len(c.watches)))
	return firsts, nil
}

func (c *ClusterCache) clearForbidden(id watchID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.taints[id]; ok && e.Reason == ReasonForbidden {
		delete(c.taints, id)
	}
}

// kickDiscovery asks the discovery loop for a refresh soon; it never blocks.
func (c *ClusterCache) kickDiscovery() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// discoveryLoop refreshes discovery every DiscoveryInterval, and shortly
// after a CRD or APIService changed. A CRD is announced before it is
// Established and served, so a kicked refresh is followed by one more a
// little later to pick up the kinds that were not served yet.
func (c *ClusterCache) discoveryLoop(ctx context.Context) {
	const settle = 200 * time.Millisecond
	const followUp = 2 * time.Second
	ticker := time.NewTicker(c.opts.DiscoveryInterval)
	defer ticker.Stop()
	var again <-chan time.Time
	for {
		kicked := false
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-again:
			again = nil
		case <-c.kick:
			kicked = true
			// Let a burst of CRD events settle into one refresh.
			select {
			case <-ctx.Done():
				return
			case <-time.After(settle):
			}
		}
		if _, err := c.refresh(ctx); err != nil && ctx.Err() == nil {
			c.opts.Logger.Error(err, "discovery refresh failed", "cluster", c.opts.Name)
		}
		if kicked {
			again = time.After(followUp)
		}
	}
}
