package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/kubegitops/gitops/rbac"
)

// listTopic is the one topic of the list broker.
const listTopic = "list"

// removedApp is the "removed" event: an app deleted through the portal.
type removedApp struct {
	Name    string `json:"name"`
	Project string `json:"project"`
}

// apiListStream pushes to a list page, as server-sent events, an "app"
// event (its row) when an app's sync or health status changes (the
// engine's Notify), a "created" event (its row) when an app is created,
// and a "removed" event when one is deleted; only for the apps the caller
// may get, decided at each event. The page updates the rows it shows and
// adds created ones; its tiles and paging are the server's at load.
func (s *server) apiListStream(w http.ResponseWriter, r *http.Request, c caller) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch, stop := s.opts.Hooks.list.subscribe(listTopic)
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	if _, err := fmt.Fprint(w, ": connected\n\n"); err != nil {
		return
	}
	fl.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case ev := <-ch:
			out, visible := s.listEventFor(c, ev)
			if !visible {
				continue
			}
			if err := writeEvent(w, out); err != nil {
				return
			}
		}
		fl.Flush()
	}
}

// listEventFor is what c is told of ev: an "app" or "created" event names
// the app and becomes its row; nothing when c may not get the app.
func (s *server) listEventFor(c caller, ev streamEvent) (streamEvent, bool) {
	switch d := ev.Data.(type) {
	case string:
		a, ok := s.app(d)
		if !ok || !s.opts.Authz.allow(c.identity, rbac.ResourceApplications, rbac.ActionGet, appObject(a)) {
			return ev, false
		}
		return streamEvent{Name: ev.Name, Data: s.rowOf(a)}, true
	case removedApp:
		obj := rbac.AppObject(d.Project, "", d.Name, "")
		return ev, s.opts.Authz.allow(c.identity, rbac.ResourceApplications, rbac.ActionGet, obj)
	}
	return ev, false
}
