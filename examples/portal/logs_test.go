package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/testenv"
)

// sseEvent is one server-sent event as a test reads it.
type sseEvent struct{ name, data string }

// openLogs asks for a Pod's logs as token and returns the response and
// its events, read as they come.
func (f *fixture) openLogs(ctx context.Context, token string, q url.Values) (*http.Response, <-chan sseEvent) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/api/v1/apps/guestbook/logs?"+q.Encode(), nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	ch := make(chan sseEvent, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			switch line := sc.Text(); {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "":
				if ev.name != "" {
					ch <- ev
				}
				ev = sseEvent{}
			}
		}
	}()
	return resp, ch
}

// waitLine reads events until a "line" event holds want; it fails on
// "end" or after the deadline.
func waitLine(t *testing.T, ch <-chan sseEvent, want string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream closed before the line %q", want)
			}
			var s string
			_ = json.Unmarshal([]byte(ev.data), &s)
			if ev.name == "line" && s == want {
				return
			}
			if ev.name == "end" {
				t.Fatalf("stream ended (%s) before the line %q", ev.data, want)
			}
		case <-deadline:
			t.Fatalf("no line %q within 30s", want)
		}
	}
}

// guestbookPod waits until the app's Deployment has a Pod in the tree and
// returns its key, as alice lists it.
func (f *fixture) guestbookPod() string {
	f.t.Helper()
	var pod string
	waitFor(f.t, 90*time.Second, "a Pod below the Deployment", func() (bool, string) {
		code, _, raw := f.call("GET", "/api/v1/apps/guestbook/pods?key="+url.QueryEscape("apps/Deployment "+f.ns+"/guestbook"), tokAdmin, "", nil)
		var pods []podView
		if code != http.StatusOK || json.Unmarshal([]byte(raw), &pods) != nil || len(pods) == 0 {
			return false, raw
		}
		if len(pods[0].Containers) != 1 || pods[0].Containers[0] != "web" {
			f.t.Fatalf("pod containers: %s, want [web]", raw)
		}
		pod = pods[0].Key
		return true, ""
	})
	return pod
}

// TestPodLogs reads a Pod's logs through the portal from the local
// cluster (kwok serves the files of testenv.PodLogFiles through the API
// server): the lines appear and follow, previous=true gives the previous
// container's, the follow ends at its time bound, bad parameters are
// refused by name, and a role without "logs, get" gets 403.
func TestPodLogs(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{RBACConfigMap: fixtureRBAC, Projects: fixtureRBACProjects, LogsFollowMax: 20 * time.Second})
	f.syncAndWait("guestbook", tokAdmin)
	pod := f.guestbookPod()
	current, previous := cluster.PodLogFiles()
	first, later, before := "first-"+f.ns, "later-"+f.ns, "previous-"+f.ns
	if err := testenv.AppendPodLog(current, first); err != nil {
		t.Fatal(err)
	}
	if err := testenv.AppendPodLog(previous, before); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, ch := f.openLogs(ctx, tokAdmin, url.Values{"key": {pod}, "container": {"web"}, "follow": {"true"}})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("logs: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	waitLine(t, ch, first)
	if err := testenv.AppendPodLog(current, later); err != nil {
		t.Fatal(err)
	}
	waitLine(t, ch, later) // followed: written after the stream began
	// The follow ends at --logs-follow-max with an end event saying so.
	select {
	case ev := <-ch:
		for ev.name == "line" {
			ev = <-ch
		}
		if ev.name != "end" || !strings.Contains(ev.data, "follow limit") {
			t.Errorf("after the follow limit: %+v, want an end event naming the limit", ev)
		}
	case <-time.After(40 * time.Second):
		t.Error("the follow did not end at its 20s limit")
	}

	_, prev := f.openLogs(ctx, tokAdmin, url.Values{"key": {pod}, "container": {"web"}, "previous": {"true"}})
	waitLine(t, prev, before)

	for q, want := range map[string]string{
		"key=" + url.QueryEscape(pod) + "&container=web&tailLines=many": "tailLines",
		"key=" + url.QueryEscape(pod) + "&container=nope":               "no container",
		"key=" + url.QueryEscape(pod) + "&container=web&follow=yes":     "follow",
		"key=" + url.QueryEscape("ConfigMap "+f.ns+"/guestbook-config"): "logs are read from a Pod",
	} {
		if code, _, raw := f.call("GET", "/api/v1/apps/guestbook/logs?"+q, tokAdmin, "", nil); code != http.StatusBadRequest || !strings.Contains(raw, want) {
			t.Errorf("logs?%s: %d %s, want 400 naming %q", q, code, raw, want)
		}
	}
	if code, _, raw := f.call("GET", "/api/v1/apps/guestbook/logs?container=web&key="+url.QueryEscape("Pod "+f.ns+"/not-ours"), tokAdmin, "", nil); code != http.StatusNotFound {
		t.Errorf("logs of a Pod not in the app: %d %s, want 404", code, raw)
	}

	// bob may get team-a's apps but argocd-rbac-cm gives him no logs.
	_, perms, _ := f.call("GET", "/api/v1/apps/guestbook/permissions", tokReaderA, "", nil)
	if perms["logs"] != false || perms["get"] != true {
		t.Errorf("bob's permissions: %v, want get without logs", perms)
	}
	for _, path := range []string{"/logs?container=web&key=" + url.QueryEscape(pod), "/pods?key=" + url.QueryEscape(pod)} {
		if code, _, raw := f.call("GET", "/api/v1/apps/guestbook"+path, tokReaderA, "", nil); code != http.StatusForbidden || !strings.Contains(raw, "logs, get") {
			t.Errorf("bob GET %s: %d %s, want 403 naming logs, get", path, code, raw)
		}
	}
}
