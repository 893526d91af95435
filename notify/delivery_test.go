package notify

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/cache/store/redisstore"
	"github.com/kubegitops/gitops/internal/redistest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
)

const hookTemplate = `webhook:
  hook:
    method: POST
    path: /notify/{{.app.metadata.name}}
    body: '{"app": {{.app.metadata.name | quote}}, "revision": {{.app.status.operationState.syncResult.revision | quote}}, "phase": {{.app.status.operationState.phase | quote}}}'
`

// fastHook are the webhook's retry options of these tests: two retries,
// 10 ms to 50 ms apart (Argo CD's defaults are 3, 1 s to 5 s).
const fastHook = "\nretryMax: 2\nretryWaitMin: 10ms\nretryWaitMax: 50ms"

func hookConfig(t *testing.T, url string) *Config {
	return mustLoad(t, map[string]string{
		"service.webhook.hook":       "url: " + url + "\nheaders: [{name: Content-Type, value: application/json}, {name: X-Token, value: $token}]\nbasicAuth: {username: bot, password: $password}" + fastHook,
		"template.hook-synced":       hookTemplate,
		"trigger.on-sync-succeeded":  "- when: app.status.operationState.phase in ['Succeeded']\n  oncePer: app.status.operationState?.syncResult?.revision\n  send: [hook-synced]",
		"trigger.on-health-degraded": "- when: app.status.health.status == 'Degraded'\n  send: [hook-synced]",
	}, map[string]string{"token": "tok-123456", "password": "pw-abcdef"})
}

var subscribed = map[string]any{
	"notifications.argoproj.io/subscribe.on-sync-succeeded.hook":  "",
	"notifications.argoproj.io/subscribe.on-health-degraded.hook": "",
}

func TestWebhookOncePerRevision(t *testing.T) {
	recv := newReceiver(t)
	reg := prometheus.NewRegistry()
	c, err := NewController(hookConfig(t, recv.URL), ControllerOptions{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	runController(t, c)
	c.Observe(testApp("web", subscribed, succeeded("abc", "Healthy")))
	waitFor(t, "one webhook", func() bool { return len(recv.requests()) == 1 })
	got := recv.requests()[0]
	if got.Method != "POST" || got.Path != "/notify/web" || got.Body != `{"app": "web", "revision": "abc", "phase": "Succeeded"}` {
		t.Errorf("request %s %s %s", got.Method, got.Path, got.Body)
	}
	if u, p, ok := basicAuth(got.Header.Get("Authorization")); !ok || u != "bot" || p != "pw-abcdef" || got.Header.Get("X-Token") != "tok-123456" || got.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", got.Header)
	}
	// The same revision again (another refresh) sends nothing; a new
	// revision sends once more. The Observe of "def" is evaluated after
	// the repeats, so when it has arrived the repeats have been judged.
	c.Observe(testApp("web", subscribed, succeeded("abc", "Healthy")))
	c.Observe(testApp("web", subscribed, succeeded("abc", "Healthy")))
	c.Observe(testApp("web", subscribed, succeeded("def", "Healthy")))
	waitFor(t, "the second revision's webhook", func() bool { return len(recv.requests()) >= 2 })
	waitFor(t, "the sent counter", func() bool {
		return testutil.ToFloat64(c.metrics.sent.WithLabelValues("on-sync-succeeded", "hook")) == 2
	})
	if n := len(recv.requests()); n != 2 || !strings.Contains(recv.requests()[1].Body, `"def"`) {
		t.Errorf("%d requests, want 2 (abc once, def once)", n)
	}
}

func TestDegradedOnceUntilRecovered(t *testing.T) {
	recv := newReceiver(t)
	c, err := NewController(hookConfig(t, recv.URL), ControllerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runController(t, c)
	degraded := func(h string) map[string]any {
		return testApp("web", map[string]any{"notifications.argoproj.io/subscribe.on-health-degraded.hook": ""},
			map[string]any{"health": map[string]any{"status": h}})
	}
	c.Observe(degraded("Degraded"))
	c.Observe(degraded("Degraded"))
	waitFor(t, "one webhook", func() bool { return len(recv.requests()) == 1 })
	c.Observe(degraded("Degraded"))
	c.Observe(degraded("Healthy"))
	c.Observe(degraded("Degraded"))
	waitFor(t, "the webhook after recovery", func() bool { return len(recv.requests()) == 2 })
	waitFor(t, "all evaluated", c.Idle)
	if n := len(recv.requests()); n != 2 {
		t.Errorf("%d webhooks, want 2: once per degradation", n)
	}
}

// TestFailingReceiverIsRetried: a failing receiver is retried as Argo
// CD's webhook service retries (retryMax); a delivery that still fails is
// counted, reported (OnFailure), not recorded as sent, and sent again by
// the next evaluation (RetryAfter) once the receiver answers.
func TestFailingReceiverIsRetried(t *testing.T) {
	recv := newReceiver(t, 500, 503) // two failures, then 200
	reg := prometheus.NewRegistry()
	state := NewMemoryState()
	c, _ := NewController(hookConfig(t, recv.URL), ControllerOptions{Registerer: reg, State: state})
	runController(t, c)
	c.Observe(testApp("web", subscribed, succeeded("abc", "Healthy")))
	waitFor(t, "the sent counter", func() bool {
		return testutil.ToFloat64(c.metrics.sent.WithLabelValues("on-sync-succeeded", "hook")) == 1
	})
	if n := len(recv.requests()); n != 3 {
		t.Errorf("%d attempts, want 3: the webhook's own two retries", n)
	}

	// A receiver that keeps failing: the delivery fails after the
	// webhook's retries, is reported and not recorded, and the next
	// evaluation sends it again.
	down := newReceiver(t, 500, 500, 500, 500, 500, 500)
	var mu gosync.Mutex
	var reported []string
	state2 := NewMemoryState()
	c2, _ := NewController(hookConfig(t, down.URL), ControllerOptions{Registerer: prometheus.NewRegistry(), State: state2,
		RetryAfter: 50 * time.Millisecond,
		OnFailure: func(app v1alpha1.AppKey, err *DeliveryError) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, app.String()+": "+err.Error())
		}})
	runController(t, c2)
	c2.Observe(testApp("web", subscribed, succeeded("abc", "Healthy")))
	waitFor(t, "the failed counter", func() bool {
		return testutil.ToFloat64(c2.metrics.failed.WithLabelValues("on-sync-succeeded", "hook")) >= 1
	})
	mu.Lock()
	first := append([]string(nil), reported...)
	mu.Unlock()
	if len(first) == 0 || !strings.Contains(first[0], "argocd/web: notification on-sync-succeeded/hook-synced to hook:") || !strings.Contains(first[0], "giving up after 3 attempt(s)") {
		t.Errorf("reported %q, want the app, trigger, template, destination and the webhook's retries", first)
	}
	keys := func(s *MemoryState) int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.keys) }
	if n := keys(state2); n != 0 {
		t.Errorf("%d keys recorded after a failed delivery, want none", n)
	}
	// The next evaluation (RetryAfter later, from the state last observed)
	// sends again; once the receiver answers, the delivery is recorded.
	waitFor(t, "a delivery after the failures", func() bool {
		return testutil.ToFloat64(c2.metrics.sent.WithLabelValues("on-sync-succeeded", "hook")) == 1
	})
	waitFor(t, "the delivery recorded", func() bool { return keys(state2) == 1 })
	if n := len(down.requests()); n != 7 {
		t.Errorf("%d requests, want 7: 3 and 3 failing, then the delivery", n)
	}
	// Recorded: the next evaluations send nothing.
	before := len(down.requests())
	c2.Observe(testApp("web", subscribed, succeeded("abc", "Healthy")))
	c2.Observe(testApp("web", subscribed, succeeded("abc", "Healthy")))
	waitFor(t, "all evaluated", c2.Idle)
	if n := len(down.requests()); n != before {
		t.Errorf("%d more requests after the delivery was recorded", n-before)
	}
}

func TestRestartSendsNothingAgain(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { client.Close() })
	state := func() State { return NewStoreState(redisstore.New(client, redisstore.DefaultOptions()), 0) }
	recv := newReceiver(t)
	app := testApp("web", subscribed, succeeded("abc", "Degraded"))

	first, _ := NewController(hookConfig(t, recv.URL), ControllerOptions{State: state()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = first.Run(ctx) }()
	first.Observe(app)
	waitFor(t, "two webhooks (synced, degraded)", func() bool { return len(recv.requests()) == 2 })
	waitFor(t, "deliveries to finish", first.Idle)
	cancel()
	<-done

	// A new controller (a restarted process) with the same Redis.
	second, _ := NewController(hookConfig(t, recv.URL), ControllerOptions{State: state()})
	runController(t, second)
	second.Observe(app)
	second.Observe(testApp("web", subscribed, succeeded("xyz", "Degraded"))) // a new revision: due
	waitFor(t, "the new revision's webhook", func() bool { return len(recv.requests()) == 3 })
	waitFor(t, "all evaluated", second.Idle)
	if reqs := recv.requests(); len(reqs) != 3 || !strings.Contains(reqs[2].Body, `"xyz"`) {
		t.Errorf("after the restart: %d requests, want only the new revision's", len(reqs))
	}
}

func basicAuth(h string) (string, string, bool) {
	const prefix = "Basic "
	if !strings.HasPrefix(h, prefix) {
		return "", "", false
	}
	b, err := decodeBase64(h[len(prefix):])
	if err != nil {
		return "", "", false
	}
	u, p, ok := strings.Cut(string(b), ":")
	return u, p, ok
}

func TestTwoControllersShareOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := mustLoad(t, nil, nil)
	a, err := NewController(cfg, ControllerOptions{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewController(cfg, ControllerOptions{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	a.metrics.sent.WithLabelValues("t", "s").Inc()
	b.metrics.sent.WithLabelValues("t", "s").Inc()
	if n := testutil.ToFloat64(a.metrics.sent.WithLabelValues("t", "s")); n != 2 {
		t.Errorf("sent = %v, want both controllers' counts on the registry", n)
	}
}

func TestDeliveryErrorsNeverShowSecrets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	var mu gosync.Mutex
	var logs []string
	log := funcr.New(func(prefix, args string) { mu.Lock(); logs = append(logs, args); mu.Unlock() }, funcr.Options{})
	cfg := mustLoad(t, map[string]string{
		"service.webhook.hook":      "url: http://" + closed + "/hooks/$token\nbasicAuth: {username: bot, password: $password}" + fastHook,
		"template.hook-synced":      hookTemplate,
		"trigger.on-sync-succeeded": "- when: app.status.operationState.phase in ['Succeeded']\n  send: [hook-synced]",
	}, map[string]string{"token": "tok-in-the-url", "password": "pw-abcdef"})
	c, _ := NewController(cfg, ControllerOptions{Log: log, Registerer: prometheus.NewRegistry()})
	runController(t, c)
	c.Observe(testApp("web", subscribed, succeeded("abc", "Healthy")))
	waitFor(t, "the failure", func() bool {
		return testutil.ToFloat64(c.metrics.failed.WithLabelValues("on-sync-succeeded", "hook")) == 1
	})
	waitFor(t, "the log", c.Idle)
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(logs, "\n")
	if !strings.Contains(all, "not delivered") || !strings.Contains(all, "connection refused") {
		t.Errorf("the failure is not logged with its cause:\n%s", all)
	}
	if strings.Contains(all, "tok-in-the-url") || strings.Contains(all, "pw-abcdef") {
		t.Errorf("a secret in the log:\n%s", all)
	}
}

// TestSyncStatusChangeReachesTriggers: the engine's SyncStatusChanged
// notification (any sync status, not only OutOfSync) sets
// app.status.sync.status, so on-sync-status-unknown fires through Notify
// without a health change.
func TestSyncStatusChangeReachesTriggers(t *testing.T) {
	recv := newReceiver(t)
	cfg := mustLoad(t, map[string]string{
		"service.webhook.hook":           "url: " + recv.URL + fastHook,
		"template.unknown":               "webhook:\n  hook:\n    method: POST\n    body: '{{.app.status.sync.status}}'\n",
		"trigger.on-sync-status-unknown": "- when: app.status.sync.status == 'Unknown'\n  send: [unknown]",
	}, nil)
	app := &gitops.Application{Spec: gitops.ApplicationSpec{Source: &gitops.ApplicationSource{RepoURL: "https://example.com/r.git"},
		Destination: gitops.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}}}
	app.Name = "web"
	app.Annotations = map[string]string{"notifications.argoproj.io/subscribe.on-sync-status-unknown.hook": ""}
	c, err := NewController(cfg, ControllerOptions{
		Application: func(name string) (*gitops.Application, bool) { return app, name == "web" }})
	if err != nil {
		t.Fatal(err)
	}
	runController(t, c)
	c.Notify(appstatus.Notification{Type: appstatus.NotifySyncStatusChanged, Key: v1alpha1.AppKey{Name: "web"}, Revision: "abc", Sync: appstatus.Synced})
	c.Notify(appstatus.Notification{Type: appstatus.NotifySyncStatusChanged, Key: v1alpha1.AppKey{Name: "web"}, Revision: "abc", Sync: appstatus.Unknown})
	waitFor(t, "the unknown webhook", func() bool { return len(recv.requests()) == 1 })
	waitFor(t, "all evaluated", c.Idle)
	if got := recv.requests(); len(got) != 1 || got[0].Body != "Unknown" {
		t.Fatalf("requests %+v", got)
	}
}

// TestDeletedReachesOnDeleted: the engine's Deleted notification sets
// metadata.deletionTimestamp, so on-deleted fires through Notify.
func TestDeletedReachesOnDeleted(t *testing.T) {
	recv := newReceiver(t)
	cfg := mustLoad(t, map[string]string{
		"service.webhook.hook": "url: " + recv.URL + fastHook,
		"template.gone":        "webhook:\n  hook:\n    method: POST\n    body: 'deleted {{.app.metadata.name}}'\n",
		"trigger.on-deleted":   "- when: app.metadata.deletionTimestamp != nil\n  oncePer: app.metadata.name\n  send: [gone]",
	}, nil)
	app := &gitops.Application{Spec: gitops.ApplicationSpec{Source: &gitops.ApplicationSource{RepoURL: "https://example.com/r.git"},
		Destination: gitops.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}}}
	app.Name = "web"
	app.Annotations = map[string]string{"notifications.argoproj.io/subscribe.on-deleted.hook": ""}
	c, err := NewController(cfg, ControllerOptions{
		Application: func(name string) (*gitops.Application, bool) { return app, name == "web" }})
	if err != nil {
		t.Fatal(err)
	}
	runController(t, c)
	c.Notify(appstatus.Notification{Type: appstatus.NotifySyncStatusChanged, Key: v1alpha1.AppKey{Name: "web"}, Revision: "abc", Sync: appstatus.Synced})
	c.Notify(appstatus.Notification{Type: appstatus.NotifyDeleted, Key: v1alpha1.AppKey{Name: "web"}})
	waitFor(t, "the deleted webhook", func() bool { return len(recv.requests()) == 1 })
	waitFor(t, "all evaluated", c.Idle)
	if got := recv.requests(); len(got) != 1 || got[0].Body != "deleted web" {
		t.Fatalf("requests %+v", got)
	}
}

// TestOncePerKeyIsNeverForgotten: as in Argo CD, a condition with oncePer
// sends once per value for good: a self-heal sync of the same revision
// (Running, then Succeeded again) sends nothing; a condition without
// oncePer is forgotten when it turns false (TestDegradedOnceUntilRecovered).
func TestOncePerKeyIsNeverForgotten(t *testing.T) {
	recv := newReceiver(t)
	c, err := NewController(hookConfig(t, recv.URL), ControllerOptions{Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	runController(t, c)
	c.Observe(testApp("web", subscribed, succeeded("abc", "Healthy")))
	waitFor(t, "the first webhook", func() bool { return len(recv.requests()) == 1 && c.Idle() })
	selfHeal := testApp("web", subscribed, map[string]any{"sync": map[string]any{"status": "OutOfSync", "revision": "abc"},
		"health":         map[string]any{"status": "Healthy"},
		"operationState": map[string]any{"phase": "Running", "startedAt": "2026-12-01T11:00:00Z", "syncResult": map[string]any{"revision": "abc"}}})
	c.Observe(selfHeal)
	c.Observe(testApp("web", subscribed, succeeded("abc", "Healthy")))
	c.Observe(testApp("web", subscribed, succeeded("def", "Healthy"))) // evaluated last: when it is sent, the others were judged
	waitFor(t, "the new revision's webhook", func() bool { return len(recv.requests()) >= 2 && c.Idle() })
	if reqs := recv.requests(); len(reqs) != 2 || !strings.Contains(reqs[1].Body, `"def"`) {
		t.Errorf("%d webhooks, want 2 (abc once, def once): the self-heal of abc sent again", len(reqs))
	}
}

// TestCatalogTemplateToWebhookIsOneGETOfItsMessage: Argo CD's catalog (the
// release's file) subscribed to a webhook service: app-deployed has no
// webhook block, so on-deployed sends one GET to the service's URL whose
// body is the template's message, as notifications-engine's webhook does;
// it is recorded once delivered, and the next evaluation sends nothing.
func TestCatalogTemplateToWebhookIsOneGETOfItsMessage(t *testing.T) {
	recv := newReceiver(t)
	repo := newGitRepo(t)
	data := catalogData(t)
	data["service.webhook.hook"] = "url: " + recv.URL + "/deployed"
	data["context"] = "argocdUrl: https://cd.example"
	c, err := Load(data, nil, LoadOptions{Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	state := NewMemoryState()
	ctl, err := NewController(c, ControllerOptions{State: state})
	if err != nil {
		t.Fatal(err)
	}
	runController(t, ctl)
	app := testApp("web", map[string]any{"notifications.argoproj.io/subscribe.on-deployed.hook": ""}, succeeded(repo.head, "Healthy"))
	ctl.Observe(app)
	waitFor(t, "the webhook", func() bool { return len(recv.requests()) == 1 && ctl.Idle() })
	want, err := c.RenderFor("app-deployed", app, Destination{Service: "hook"})
	if err != nil {
		t.Fatal(err)
	}
	got := recv.requests()[0]
	if got.Method != http.MethodGet || got.Path != "/deployed" || got.Body != want.Notification.Message ||
		!strings.Contains(got.Body, "Application web is now running new version of deployments manifests") {
		t.Errorf("request %s %s body %q, want GET /deployed with the message %q", got.Method, got.Path, got.Body, want.Notification.Message)
	}
	state.mu.Lock()
	recorded := len(state.keys)
	state.mu.Unlock()
	if recorded != 1 {
		t.Errorf("%d keys recorded, want the delivery", recorded)
	}
	ctl.Observe(app)
	waitFor(t, "the next evaluation", ctl.Idle)
	if n := len(recv.requests()); n != 1 {
		t.Errorf("%d requests after the next evaluation, want still 1", n)
	}
}

// TestGitHubStatusLimitIsNotRetried: as notifications-engine decides,
// GitHub's refusal of more commit statuses for a commit (422) is not
// retried: it is reported and recorded, so the next evaluation sends
// nothing.
func TestGitHubStatusLimitIsNotRetried(t *testing.T) {
	var mu gosync.Mutex
	statuses := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/statuses/") {
			mu.Lock()
			statuses++
			mu.Unlock()
			reply(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed"})
			return
		}
		body, _ := io.ReadAll(r.Body)
		_, _, _ = githubAPI(w, r, body)
	}))
	t.Cleanup(srv.Close)
	c := mustLoad(t, map[string]string{
		"service.github":    "appID: 1\ninstallationID: 2\nprivateKey: $key\nenterpriseBaseURL: " + srv.URL + "/api/v3",
		"template.status":   "message: deployed\ngithub:\n  status: {state: success, label: argocd/web}",
		"trigger.on-synced": "- when: app.status.operationState.phase in ['Succeeded']\n  send: [status]",
	}, map[string]string{"key": rsaKeyPEM(t)})
	var reported []string
	state := NewMemoryState()
	ctl, _ := NewController(c, ControllerOptions{State: state, OnFailure: func(_ v1alpha1.AppKey, err *DeliveryError) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err.Error())
	}})
	runController(t, ctl)
	app := testApp("web", map[string]any{"notifications.argoproj.io/subscribe.on-synced.github": ""}, succeeded("4f2a9c1e", "Healthy"))
	ctl.Observe(app)
	waitFor(t, "the refusal", func() bool { mu.Lock(); defer mu.Unlock(); return len(reported) == 1 })
	waitFor(t, "the controller", ctl.Idle)
	ctl.Observe(app)
	waitFor(t, "the next evaluation", ctl.Idle)
	mu.Lock()
	defer mu.Unlock()
	state.mu.Lock()
	defer state.mu.Unlock()
	if statuses != 1 || len(state.keys) != 1 || !strings.Contains(reported[0], "too many commit statuses for sha 4f2a9c1e and context argocd/web") {
		t.Errorf("%d status requests, %d keys recorded, reported %q; want one request, recorded and reported", statuses, len(state.keys), reported)
	}
}

// A notification delivered while the controller stops is still recorded:
// the next controller with the same state sends it not again. (The
// receiver stops the first controller while it answers.)
func TestDeliveredWhileStoppingIsRecorded(t *testing.T) {
	state := NewMemoryState()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls gosync.Map
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		calls.Store(time.Now().UnixNano(), req.URL.Path)
		cancel() // the process is told to stop while the receiver answers
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(recv.Close)
	count := func() int {
		n := 0
		calls.Range(func(any, any) bool { n++; return true })
		return n
	}
	app := testApp("web", map[string]any{"notifications.argoproj.io/subscribe.on-sync-succeeded.hook": ""}, succeeded("abc", "Healthy"))
	first, err := NewController(hookConfig(t, recv.URL), ControllerOptions{State: state})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = first.Run(ctx) }()
	first.Observe(app)
	<-done // Run returns once its senders are done
	if count() != 1 {
		t.Fatalf("%d webhooks before the stop, want 1", count())
	}

	second, err := NewController(hookConfig(t, recv.URL), ControllerOptions{State: state})
	if err != nil {
		t.Fatal(err)
	}
	runController(t, second)
	second.Observe(app)
	second.Observe(testApp("web", subscribed, succeeded("xyz", "Healthy"))) // due: evaluated after abc
	waitFor(t, "the new revision's webhook", func() bool { return count() >= 2 })
	waitFor(t, "all evaluated", second.Idle)
	if n := count(); n != 2 {
		t.Errorf("%d webhooks in all, want 2: the one delivered while stopping was sent again", n)
	}
}
