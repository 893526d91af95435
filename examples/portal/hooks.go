package main

import (
	"strings"
	gosync "sync"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/sync"
	"k8s.io/client-go/rest"
)

// engineHooks are what the portal plugs into the engine's options before
// the engine is built: it keeps the engine's own cluster caches (for the
// resource tree and live objects) and turns sync progress into events for
// the pages.
type engineHooks struct {
	broker *broker

	mu     gosync.Mutex
	caches map[string]*cache.ClusterCache // by rest.Config.Host
}

func newEngineHooks() *engineHooks {
	return &engineHooks{broker: newBroker(), caches: map[string]*cache.ClusterCache{}}
}

// install wires the hooks into opts, keeping what opts already had.
func (h *engineHooks) install(opts *gitops.Options) {
	newCache := opts.NewClusterCache
	opts.NewClusterCache = func(cfg *rest.Config, copts cache.Options) (gitops.ClusterCache, error) {
		if newCache != nil {
			c, err := newCache(cfg, copts)
			if cc, ok := c.(*cache.ClusterCache); ok && err == nil {
				h.keep(cfg, cc)
			}
			return c, err
		}
		c, err := cache.New(cfg, copts)
		if err != nil {
			return nil, err
		}
		h.keep(cfg, c)
		return c, nil
	}
	onProgress := opts.Sync.OnProgress
	opts.Sync.OnProgress = func(p sync.Progress) {
		if onProgress != nil {
			onProgress(p)
		}
		h.broker.publish(p.App, streamEvent{Name: "progress", Data: progressView(p)})
	}
}

func (h *engineHooks) keep(cfg *rest.Config, c *cache.ClusterCache) {
	h.mu.Lock()
	h.caches[strings.TrimSuffix(cfg.Host, "/")] = c
	h.mu.Unlock()
}

// cacheFor returns the engine's cache of the cluster at host, once the
// engine has connected to it.
func (h *engineHooks) cacheFor(host string) (*cache.ClusterCache, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.caches[strings.TrimSuffix(host, "/")]
	return c, ok
}
