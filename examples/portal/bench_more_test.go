package main

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkAppPage1000Apps renders one app's page (HTML) and answers its
// API (JSON) with 1,000 apps served, the engine's status in memory (the
// destination is offline, so the tree is empty: the figure is the portal's
// own cost, not the cluster's).
func BenchmarkAppPage1000Apps(b *testing.B) {
	p := benchPortal(b, 1000)
	c := caller{identity: identity{User: "bench", Groups: []string{"platform"}}}
	m := http.NewServeMux()
	m.Handle("GET /apps/{name}", p.srv.authedAs(c, p.srv.appPage))
	m.Handle("GET /api/v1/apps/{name}", p.srv.authedAs(c, p.srv.apiApp))
	for _, path := range []string{"/apps/app-0500", "/api/v1/apps/app-0500"} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			var size int
			for b.Loop() {
				rec := httptest.NewRecorder()
				m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/answer")
		})
	}
}

// BenchmarkPageEvents is the event stream of an app page: events published
// to the broker (as the engine's hooks and the page watcher do) and read
// by an SSE client over HTTP, 32 in flight at most (the broker's buffer is
// 64; a slower page loses events rather than slowing the engine). It
// reports the events per second a page's connection carries.
func BenchmarkPageEvents(b *testing.B) {
	p := benchPortal(b, 1)
	c := caller{identity: identity{User: "bench", Groups: []string{"platform"}}}
	m := http.NewServeMux()
	m.Handle("GET /api/v1/apps/{name}/stream", p.srv.authedAs(c, p.srv.apiStream))
	hs := httptest.NewServer(m)
	defer hs.Close()
	resp, err := hs.Client().Get(hs.URL + "/api/v1/apps/app-0000/stream")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	arrived := make(chan struct{}, 1024)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "event: status") {
				arrived <- struct{}{}
			}
		}
	}()
	var got int64
	waitGot := func(n int64) {
		timeout := time.NewTimer(10 * time.Second)
		defer timeout.Stop()
		for got < n {
			select {
			case <-arrived:
				got++
			case <-timeout.C:
				b.Fatalf("%d of %d events arrived", got, n)
			}
		}
	}
	waitGot(1) // the first status, sent on connect
	br := p.srv.opts.Hooks.broker
	ev := streamEvent{Name: "status", Data: badges{Sync: "OutOfSync", Health: "Progressing", Revision: strings.Repeat("a", 40)}}
	sent := int64(1)
	start := time.Now()
	for b.Loop() {
		br.publish("app-0000", ev)
		sent++
		if sent%32 == 0 {
			waitGot(sent)
		}
	}
	waitGot(sent)
	b.ReportMetric(float64(sent-1)/time.Since(start).Seconds(), "events/s")
}
