package main

import (
	"bytes"
	"context"
	"encoding/json"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
)

// pageGap is the shortest time between two pushes to the pages of one
// app: a burst of refreshes (a rollout's Pods coming up one by one) is one
// push per gap, the last state included.
const pageGap = 100 * time.Millisecond

// pageUpdate is the "page" event: the parts of the app page that change
// with a refresh or a sync, besides the status badges.
type pageUpdate struct {
	Tree      appTree        `json:"tree"`
	History   []historyRow   `json:"history"`
	Operation *operationView `json:"operation,omitempty"`
	// Commit is the author and message of the compared revision.
	Commit *commitMeta `json:"commit,omitempty"`
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
	commit    *commitMeta
	page      []byte // the JSON of the last "page" event
}

// pageNudges are the apps whose pages are due a push, and when each was
// last pushed (for pageGap).
type pageNudges struct {
	mu gosync.Mutex
	// pending are the nudged apps; true when a page joined (its state is
	// pushed even when unchanged).
	pending map[string]bool
	last    map[string]time.Time
	// wake is signalled (never blocking) when an app is nudged.
	wake chan struct{}
}

func newPageNudges() *pageNudges {
	return &pageNudges{pending: map[string]bool{}, last: map[string]time.Time{}, wake: make(chan struct{}, 1)}
}

// nudge marks app's pages due a push; it never blocks (it runs on the
// engine's goroutines).
func (n *pageNudges) nudge(app string) { n.add(app, false) }

// joined marks app's pages due a push of their whole state: a page
// joined.
func (n *pageNudges) joined(app string) { n.add(app, true) }

func (n *pageNudges) add(app string, whole bool) {
	n.mu.Lock()
	n.pending[app] = n.pending[app] || whole
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// due returns the nudged apps not pushed within pageGap of now (true:
// push the whole state), marking them pushed, and how long until the next
// of the others is due (0: none waits).
func (n *pageNudges) due(now time.Time) (apps map[string]bool, wait time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	apps = map[string]bool{}
	for app, whole := range n.pending {
		if left := pageGap - now.Sub(n.last[app]); left > 0 {
			if wait == 0 || left < wait {
				wait = left
			}
			continue
		}
		delete(n.pending, app)
		n.last[app] = now
		apps[app] = whole
	}
	for app, at := range n.last {
		if !n.pending[app] && now.Sub(at) >= pageGap {
			delete(n.last, app) // keeps the map to the apps in a burst
		}
	}
	return apps, wait
}

// watchPages pushes, for every app some page watches, a "status" event
// when its badges change and a "page" event when its tree, history or last
// operation change, until ctx ends. Nothing runs on a clock: the engine's
// OnStatus (after every refresh its run loop records, which a change in
// the cluster cache to one of the app's objects or their descendants
// triggers, and after each Refresh and Sync) and a page connecting nudge
// the app, and its state is then compared with what was last pushed, at
// most once per pageGap per app.
func (s *server) watchPages(ctx context.Context, n *pageNudges) {
	stop := s.opts.Engine.Apps().OnStatus(func(k v1alpha1.AppKey, _ appstatus.Status) { n.nudge(k.Name) })
	defer stop()
	// gap fires when the first app held back by pageGap is due; it is
	// armed only while one is.
	gap := time.NewTimer(time.Hour)
	gap.Stop()
	defer gap.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		case <-gap.C:
		}
		apps, wait := n.due(time.Now())
		for name, whole := range apps {
			if a, ok := s.app(name); ok {
				s.pushPage(ctx, a, whole)
			}
		}
		gap.Stop()
		if wait > 0 {
			gap.Reset(wait)
		}
	}
}

// pushPage compares one app's state with its memo and publishes what
// changed (everything when whole: a page joined).
func (s *server) pushPage(ctx context.Context, a *gitops.Application, whole bool) {
	b := s.opts.Hooks.broker
	m := b.memo(a.Name)
	if m == nil {
		return
	}
	st, ok := s.appStatus(a)
	if !ok {
		return
	}
	if now := statusBadges(st); whole || now != m.status {
		m.status = now
		b.publish(a.Name, streamEvent{Name: "status", Data: now})
	}
	if !st.ReconciledAt.Equal(m.reconciled) || m.page == nil {
		m.reconciled = st.ReconciledAt
		m.history = s.historyRows(ctx, a)
		m.operation = s.lastOperation(ctx, a)
		m.commit = s.firstCommit(ctx, a, st.Revision)
	}
	up := pageUpdate{Tree: s.tree(ctx, a, st), History: m.history, Operation: m.operation, Commit: m.commit}
	data, err := json.Marshal(up)
	if err != nil || (!whole && bytes.Equal(data, m.page)) {
		return
	}
	m.page = data
	b.publish(a.Name, streamEvent{Name: "page", Data: json.RawMessage(data)})
}
