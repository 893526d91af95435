package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	gosync "sync"
	"time"
)

// streamEvent is one server-sent event for an app's page.
type streamEvent struct {
	// Name is the SSE event name: "progress", "operation", "status" or
	// "page".
	Name string
	Data any
}

// broker fans events out to the pages watching an app. A slow page loses
// events rather than slowing the engine (the engine calls it
// synchronously); the page asks for the whole state again on reconnect.
type broker struct {
	mu   gosync.Mutex
	subs map[string]map[chan streamEvent]struct{}
	// last is what was last pushed per watched app.
	last map[string]*pageMemo
	// joined, when set (onJoin), is told of each new subscriber's app,
	// outside mu: the app's page gets its state pushed at once.
	joined func(app string)
}

// onJoin sets the function told of each new subscriber's app.
func (b *broker) onJoin(fn func(app string)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.joined = fn
}

func newBroker() *broker {
	return &broker{subs: map[string]map[chan streamEvent]struct{}{}, last: map[string]*pageMemo{}}
}

// watched returns the apps some page watches.
func (b *broker) watched() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	apps := make([]string, 0, len(b.subs))
	for a := range b.subs {
		apps = append(apps, a)
	}
	return apps
}

// memo returns what was last pushed to the pages of app, made on first
// use; nil when no page watches app any more.
func (b *broker) memo(app string) *pageMemo {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs[app] == nil {
		return nil
	}
	m := b.last[app]
	if m == nil {
		m = &pageMemo{}
		b.last[app] = m
	}
	return m
}

func (b *broker) subscribe(app string) (<-chan streamEvent, func()) {
	ch := make(chan streamEvent, 64)
	b.mu.Lock()
	if b.subs[app] == nil {
		b.subs[app] = map[chan streamEvent]struct{}{}
	}
	b.subs[app][ch] = struct{}{}
	joined := b.joined
	b.mu.Unlock()
	if joined != nil {
		joined(app)
	}
	return ch, func() {
		b.mu.Lock()
		delete(b.subs[app], ch)
		if len(b.subs[app]) == 0 {
			delete(b.subs, app)
			delete(b.last, app)
		}
		b.mu.Unlock()
	}
}

// publish never blocks.
func (b *broker) publish(app string, ev streamEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[app] {
		select {
		case ch <- ev:
		default:
		}
	}
}

// heartbeat keeps idle connections open through proxies.
const heartbeat = 20 * time.Second

// serveStream writes the events of one app as text/event-stream until the
// client goes away; first is sent at once (the current state).
func (b *broker) serveStream(w http.ResponseWriter, r *http.Request, app string, first streamEvent) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch, stop := b.subscribe(app)
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	if err := writeEvent(w, first); err != nil {
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
			if err := writeEvent(w, ev); err != nil {
				return
			}
		}
		fl.Flush()
	}
}

func writeEvent(w http.ResponseWriter, ev streamEvent) error {
	data, err := json.Marshal(ev.Data)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Name, data)
	return err
}
