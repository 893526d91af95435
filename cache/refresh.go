package cache

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kinds whose changes mean the set of API kinds may have changed.
var (
	gkCRD        = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	gkAPIService = schema.GroupKind{Group: "apiregistration.k8s.io", Kind: "APIService"}
)

// refresh runs discovery and makes the running watches match it: new kinds
// get a watch (which checks its access first), kinds denied last time are
// checked again, vanished kinds lose their watch and their objects. It
// returns a channel per new watch that closes after the watch's access check
// and first list attempt.
func (c *ClusterCache) refresh(ctx context.Context) ([]<-chan struct{}, error) {
	d, err := discover(c.disc)
	if err != nil {
		return nil, err
	}
	desired := c.opts.desiredWatches(d.resources)

	c.mu.Lock()
	if c.apiGen == 0 || c.serverVersion != d.version || !reflect.DeepEqual(c.apiLists, d.lists) {
		// Only a discovery that found something new counts: what is
		// built per generation (scope indexes, API version lists, the
		// engine's refresh memos) stays valid across periodic ones.
		c.apiLists = d.lists
		c.apiGen++
	}
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

	var firsts []<-chan struct{}
	for id, r := range desired {
		if w, running := c.watches[id]; running {
			if !w.wasDenied() {
				continue
			}
			// Denied last time: ask again, RBAC may have changed.
			delete(c.watches, id)
		}
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
			c.with.Logger.Error(err, "discovery refresh failed", "cluster", c.opts.Name)
		}
		if kicked {
			again = time.After(followUp)
		}
	}
}
