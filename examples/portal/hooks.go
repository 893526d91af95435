package main

import (
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/sync"
)

// engineHooks are what the portal plugs into the engine's options before
// the engine is built: it turns sync progress into events for the pages.
type engineHooks struct {
	broker *broker
}

func newEngineHooks() *engineHooks {
	return &engineHooks{broker: newBroker()}
}

// install wires the hooks into opts, keeping what opts already had.
func (h *engineHooks) install(opts *gitops.Options) {
	onProgress := opts.Sync.OnProgress
	opts.Sync.OnProgress = func(p sync.Progress) {
		if onProgress != nil {
			onProgress(p)
		}
		h.broker.publish(p.App, streamEvent{Name: "progress", Data: progressView(p)})
	}
}
