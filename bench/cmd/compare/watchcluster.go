package main

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops/cache"
)

// watchCluster starts a cluster cache watching the whole cluster with the
// engine's defaults, as a section's background load or a syncer's view of
// the live objects, and returns it once synced. The caller Stops it.
func (h *harness) watchCluster(ctx context.Context) (*cache.ClusterCache, error) {
	c, err := cache.New(h.restConfig(nil), cache.DefaultOptions(), cache.Collaborators{})
	if err != nil {
		return nil, fmt.Errorf("cluster cache: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		c.Stop()
		return nil, fmt.Errorf("cluster cache: %w", err)
	}
	return c, nil
}
