package recipes

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
)

// Each notification arrives as one JSON POST with the engine's fields.
func TestWebhookPostsJSON(t *testing.T) {
	got := make(chan appstatus.Notification, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n appstatus.Notification
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
		}
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			t.Error(err)
		}
		got <- n
	}))
	defer srv.Close()
	hook := NewWebhook(srv.URL, WebhookOptions{})
	defer hook.Close()

	sent := appstatus.Notification{Type: appstatus.NotifyHealthChanged, Key: v1alpha1.AppKey{Name: "shop"}, Revision: "3f2a9c1", Health: health.Degraded,
		Message: "apps/Deployment shop/web: 0 of 2 replicas available", Time: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	hook.Notify(sent)
	select {
	case n := <-got:
		if n.Time.Equal(sent.Time) {
			n.Time = sent.Time // same instant; JSON does not keep the *time.Location
		}
		if n != sent {
			t.Errorf("posted %+v, want %+v", n, sent)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no POST within 10 s")
	}
}

// Set as Options.Notify, the webhook receives the engine's notifications
// of a real sync.
func TestWebhookThroughEngine(t *testing.T) {
	got := make(chan appstatus.Notification, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n appstatus.Notification
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			t.Error(err)
		}
		got <- n
	}))
	defer srv.Close()
	hook := NewWebhook(srv.URL, WebhookOptions{})
	defer hook.Close()
	e := newEngine(t, func(o *gitops.Options) { o.Notify = hook.Notify })
	ns := cluster.TestNamespace(t)
	repo := writeRepo(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"})
	app := loadApp(t, strings.ReplaceAll(plainApp, "namespace: shop", "namespace: "+ns), repo)
	if _, err := e.Sync(context.Background(), app, gitops.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []appstatus.NotificationType{appstatus.NotifySyncStarted, appstatus.NotifySyncSucceeded} {
		select {
		case n := <-got:
			if n.Type != want || n.Key.Name != "shop" || n.Revision == "" || n.Time.IsZero() {
				t.Errorf("posted %+v, want %s of app shop with revision and time", n, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s POST within 10 s", want)
		}
	}
}

// A hanging endpoint never blocks Notify: what does not fit in the queue
// is dropped and counted, and a POST gives up after the timeout, logged
// without the URL's token, and the sender moves on.
func TestWebhookNeverBlocks(t *testing.T) {
	arrived := make(chan string, 10)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n appstatus.Notification
		_ = json.NewDecoder(r.Body).Decode(&n)
		arrived <- n.Key.Name
		if n.Key.Name == "hangs" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	var mu sync.Mutex
	var logs []string
	log := funcr.New(func(prefix, args string) { mu.Lock(); logs = append(logs, args); mu.Unlock() }, funcr.Options{})
	hook := NewWebhook(srv.URL+"/hooks/SECRET-TOKEN", WebhookOptions{Timeout: 200 * time.Millisecond, Queue: 1, Log: log})
	defer hook.Close()

	hook.Notify(appstatus.Notification{Key: v1alpha1.AppKey{Name: "hangs"}})
	if app := <-arrived; app != "hangs" { // the sender is now stuck in this POST
		t.Fatalf("first POST was for %q", app)
	}
	hook.Notify(appstatus.Notification{Key: v1alpha1.AppKey{Name: "queued"}})  // fills the queue
	hook.Notify(appstatus.Notification{Key: v1alpha1.AppKey{Name: "dropped"}}) // does not fit: dropped at once
	if hook.Dropped() != 1 {
		t.Errorf("dropped %d, want 1", hook.Dropped())
	}
	select { // the hanging POST times out and the queued one is sent
	case app := <-arrived:
		if app != "queued" {
			t.Errorf("second POST was for %q, want queued", app)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sender did not move on after the timeout")
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(logs, "\n")
	if !strings.Contains(all, "webhook post failed") || !strings.Contains(all, "webhook queue full") {
		t.Errorf("logs lack the failure or the drop:\n%s", all)
	}
	if strings.Contains(all, "SECRET-TOKEN") {
		t.Errorf("logs show the webhook URL:\n%s", all)
	}
}
