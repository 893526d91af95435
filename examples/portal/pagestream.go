package main

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/kubegitops/gitops"
)

// pageCheck is how often the state of each app a page watches is
// compared with what was last pushed.
const pageCheck = 250 * time.Millisecond

// pageUpdate is the "page" event: the parts of the app page that change
// with a refresh or a sync, besides the status badges.
type pageUpdate struct {
	Tree      appTree        `json:"tree"`
	History   []historyRow   `json:"history"`
	Operation *operationView `json:"operation,omitempty"`
}

// pageMemo is what was last pushed to the pages of one app. It is only
// touched by the watchPages goroutine.
type pageMemo struct {
	status     badges
	reconciled time.Time
	// history and operation are read from the state store again only
	// when a refresh finished (every sync is followed by one).
	history   []historyRow
	operation *operationView
	page      []byte // the JSON of the last "page" event
}

// watchPages pushes, for every app some page watches, a "status" event
// when its badges change and a "page" event when its tree, history or last
// operation change, until ctx ends. The comparison runs here, on the
// engine's in-memory status and tree; the page never polls. A page that
// connects gets both at the next check.
func (s *server) watchPages(ctx context.Context) {
	b := s.opts.Hooks.broker
	tick := time.NewTicker(pageCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, name := range b.watched() {
			a, ok := s.app(name)
			if !ok {
				continue
			}
			s.pushPage(ctx, a)
		}
	}
}

// pushPage compares one app's state with its memo and publishes what
// changed.
func (s *server) pushPage(ctx context.Context, a *gitops.Application) {
	b := s.opts.Hooks.broker
	m := b.memo(a.Name)
	if m == nil {
		return
	}
	st, ok := s.opts.Engine.AppStatus(a.Name)
	if !ok {
		return
	}
	if now := statusBadges(st); now != m.status {
		m.status = now
		b.publish(a.Name, streamEvent{Name: "status", Data: now})
	}
	if !st.ReconciledAt.Equal(m.reconciled) || m.page == nil {
		m.reconciled = st.ReconciledAt
		m.history = s.historyRows(ctx, a.Name)
		m.operation = s.lastOperation(ctx, a.Name)
	}
	up := pageUpdate{Tree: s.tree(ctx, a, st), History: m.history, Operation: m.operation}
	data, err := json.Marshal(up)
	if err != nil || bytes.Equal(data, m.page) {
		return
	}
	m.page = data
	b.publish(a.Name, streamEvent{Name: "page", Data: json.RawMessage(data)})
}
