package main

import (
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/sync"
)

// engineHooks are what the portal plugs into the engine's options before
// the engine is built: it turns sync progress into events for the pages.
type engineHooks struct {
	broker *broker
	// list pushes to the list pages (topic listTopic): an app whose sync
	// or health status changed, was created or was deleted.
	list *broker
}

func newEngineHooks() *engineHooks {
	return &engineHooks{broker: newBroker(), list: newBroker()}
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
	notify := opts.Notify
	opts.Notify = func(n appstatus.Notification) {
		if notify != nil {
			notify(n)
		}
		switch n.Type {
		case appstatus.NotifySyncStatusChanged, appstatus.NotifyHealthChanged:
			h.list.publish(listTopic, streamEvent{Name: "app", Data: n.Key.Name})
		}
	}
}
