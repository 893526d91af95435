package main

import (
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fluxManager returns Flux's ssa.ResourceManager on a controller-runtime
// client of the cluster (no client-side rate limit; writes counted by
// counter when given), with field manager field and h.cfg.Workers
// concurrent dry-runs (Flux applies one object at a time by design).
func (h *harness) fluxManager(counter *writeCounter, field string) (*ssa.ResourceManager, client.Client, error) {
	c, err := client.New(h.restConfig(counter), client.Options{})
	if err != nil {
		return nil, nil, err
	}
	poller := polling.NewStatusPoller(c, c.RESTMapper(), polling.Options{})
	m := ssa.NewResourceManager(c, poller, ssa.Owner{Field: field, Group: "bench.kubegitops.io"})
	m.SetConcurrency(h.cfg.Workers)
	return m, c, nil
}
