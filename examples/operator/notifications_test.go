package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/notify"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hookReceiver is a webhook endpoint recording what it is sent.
type hookReceiver struct {
	mu    gosync.Mutex
	posts []map[string]string
	bad   []string
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	var m map[string]string
	switch {
	case r.Method != http.MethodPost:
		h.bad = append(h.bad, "method "+r.Method)
	case r.Header.Get("X-Token") != "s3cr3t-token":
		h.bad = append(h.bad, "X-Token "+r.Header.Get("X-Token"))
	case json.Unmarshal(body, &m) != nil:
		h.bad = append(h.bad, "body "+string(body))
	default:
		h.posts = append(h.posts, m)
	}
}

// revisions returns how many POSTs named each revision, and the bodies.
func (h *hookReceiver) revisions() (map[string]int, []map[string]string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for _, p := range h.posts {
		out[p["revision"]]++
	}
	return out, append([]map[string]string(nil), h.posts...)
}

// notificationsCM is argocd-notifications-cm with a webhook service to url
// and Argo CD's catalog trigger on-sync-succeeded, whose template's body
// carries version; extra keys are added.
func notificationsCM(ns, url, version string, extra map[string]string) *corev1.ConfigMap {
	data := map[string]string{
		"service.webhook.receiver": "url: " + url + "\nheaders:\n- name: X-Token\n  value: $token\n",
		"trigger.on-sync-succeeded": `- description: Application syncing has succeeded
  send:
  - app-sync-succeeded
  when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']
  oncePer: app.status.operationState?.syncResult?.revision
`,
		"template.app-sync-succeeded": `message: Application {{.app.metadata.name}} has been successfully synced.
webhook:
  receiver:
    method: POST
    path: /synced
    body: |
      {"app": "{{.app.metadata.name}}", "revision": "{{.app.status.operationState.syncResult.revision}}", "v": "` + version + `"}
`,
	}
	for k, v := range extra {
		data[k] = v
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: notify.ConfigMapName}, Data: data}
}

// startOperator runs the operator (run, as its command line does) serving
// ns until the returned stop is called or the test ends.
func startOperator(t *testing.T, ns string) (stop func()) {
	t.Helper()
	return startOperatorArgs(t, ns, "-interval", "1m")
}

// startOperatorArgs is startOperator with more command line arguments
// (later ones win).
func startOperatorArgs(t *testing.T, ns string, args ...string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns,
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-applicationsets=false"}, args...))
	}()
	var once gosync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitUntil polls cond until it holds, failing after a deadline with what.
func waitUntil(t *testing.T, what func() string, cond func(ctx context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		return cond(ctx), nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what(), err)
	}
}

// evaluations is the count of on-sync-succeeded evaluations that matched,
// scraped from the /metrics endpoint at addr of one operator run (each run
// has its own metrics registry, so a restarted operator counts from 0).
func evaluations(t *testing.T, addr string) float64 {
	t.Helper()
	sum := 0.0
	for _, line := range strings.Split(scrape(t, addr), "\n") {
		if !strings.HasPrefix(line, "gitops_notifications_trigger_evaluations_total{") ||
			!strings.Contains(line, `matched="true"`) || !strings.Contains(line, `trigger="on-sync-succeeded"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// TestOperatorDeliversNotifications runs the operator with an
// argocd-notifications-cm in its namespace and an Application subscribed
// by annotation: each sync POSTs once to the webhook; a restarted operator
// sends nothing again (the notified annotation on the Application); a new
// ConfigMap version with a template that does not parse is picked up
// without restart, its bad key reported by an Event, and the good trigger
// still delivers.
func TestOperatorDeliversNotifications(t *testing.T) {
	ns := cluster.TestNamespace(t)
	dest := cluster.TestNamespace(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	manifest := func(v string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notified}\ndata: {v: \"" + v + "\"}\n")
	}
	head, err := gs.CreateRepository(ctx, "app", fstest.MapFS{"app/cm.yaml": {Data: manifest("1")}})
	if err != nil {
		t.Fatal(err)
	}
	recv := &hookReceiver{}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: notify.SecretName}, StringData: map[string]string{"token": "s3cr3t-token"}}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	cm := notificationsCM(ns, srv.URL, "1", nil)
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	stop := startOperator(t, ns)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello",
		Annotations: map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.receiver": ""}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: gs.RepoURL("app"), Path: "app", TargetRevision: gs.Branch()},
			Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		}}
	// The CRD is installed by run: create once it is served.
	waitUntil(t, func() string { return "create Application" }, func(ctx context.Context) bool {
		return c.Create(ctx, app.DeepCopy()) == nil
	})

	// expect waits until the webhook has had exactly want (revision ->
	// POSTs), and checks every body.
	expect := func(what string, want map[string]int, version string) {
		t.Helper()
		waitUntil(t, func() string {
			got, posts := recv.revisions()
			return fmt.Sprintf("%s: webhook POSTs by revision %v, want %v; bodies %v; refused %v", what, got, want, posts, recv.bad)
		}, func(context.Context) bool {
			got, _ := recv.revisions()
			return fmt.Sprint(got) == fmt.Sprint(want)
		})
		_, posts := recv.revisions()
		last := posts[len(posts)-1]
		if last["app"] != "hello" || last["v"] != version {
			t.Errorf("%s: last body %v, want app hello and template version %s", what, last, version)
		}
	}
	// syncTo commits a new version of the manifest and asks for a refresh,
	// which syncs it (automated); it returns the new revision.
	syncTo := func(v string) string {
		t.Helper()
		rev, err := gs.Commit(ctx, "app", "v"+v, map[string][]byte{"app/cm.yaml": manifest(v)})
		if err != nil {
			t.Fatal(err)
		}
		patch := []byte(`{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"hard"}}}`)
		if err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
		return rev
	}

	expect("first sync", map[string]int{head: 1}, "1")
	got := &v1alpha1.Application{}
	waitUntil(t, func() string {
		return fmt.Sprintf("annotation %s on the Application: %v", notify.NotifiedAnnotation, got.Annotations)
	},
		func(ctx context.Context) bool {
			return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "hello"}, got) == nil &&
				strings.Contains(got.Annotations[notify.NotifiedAnnotation], head)
		})
	rev2 := syncTo("2")
	expect("second sync", map[string]int{head: 1, rev2: 1}, "1")
	// The annotation is written after the POST: stopping before it is
	// would send rev2 again, rightly.
	waitUntil(t, func() string {
		return fmt.Sprintf("annotation %s on the Application: %v", notify.NotifiedAnnotation, got.Annotations)
	},
		func(ctx context.Context) bool {
			return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "hello"}, got) == nil &&
				strings.Contains(got.Annotations[notify.NotifiedAnnotation], rev2)
		})

	// A new operator instance: the annotation says what was sent.
	stop()
	metrics := freeAddr(t)
	startOperatorArgs(t, ns, "-interval", "1m", "-metrics-bind-address", metrics)
	waitUntil(t, func() string { return "the restarted operator evaluates the Application" }, func(context.Context) bool {
		return evaluations(t, metrics) > 0
	})
	rev3 := syncTo("3")
	expect("sync after restart", map[string]int{head: 1, rev2: 1, rev3: 1}, "1")

	// A second version of the ConfigMap: the template's body changes, a
	// template does not parse and a trigger does not compile.
	next := notificationsCM(ns, srv.URL, "2", map[string]string{
		"template.broken":  "message: '{{.app.metadata.name'\n",
		"trigger.on-bogus": "- when: app.status ===\n  send: [app-sync-succeeded]\n",
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	cm.Data = next.Data
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	var reported []string
	waitUntil(t, func() string {
		return fmt.Sprintf("Events on %s naming template.broken and trigger.on-bogus: %v", notify.ConfigMapName, reported)
	},
		func(ctx context.Context) bool {
			list, err := kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + notify.ConfigMapName})
			if err != nil {
				return false
			}
			reported = nil
			for _, e := range list.Items {
				if e.Reason == "InvalidNotificationConfig" && e.Type == corev1.EventTypeWarning {
					reported = append(reported, e.Message)
				}
			}
			all := strings.Join(reported, "\n")
			return strings.Contains(all, "key template.broken left out") && strings.Contains(all, "key trigger.on-bogus left out")
		})
	if all := strings.Join(reported, "\n"); strings.Contains(all, "s3cr3t-token") {
		t.Errorf("an Event holds the secret: %s", all)
	}
	rev4 := syncTo("4")
	expect("sync after the ConfigMap changed", map[string]int{head: 1, rev2: 1, rev3: 1, rev4: 1}, "2")
}

// TestLoadNotificationConfigLeavesOutBadKeys: each bad key is left out and
// named, never with a secret value, and the rest loads.
func TestLoadNotificationConfigLeavesOutBadKeys(t *testing.T) {
	data := notificationsCM("ns", "http://127.0.0.1:1", "1", map[string]string{
		"template.broken":       "message: '{{.app.metadata.name'\n",
		"trigger.on-broken":     "- when: 'true'\n  send: [broken]\n",
		"service.slack":         "token: $slack-token\n",
		"defaultTriggers.slack": "[on-sync-succeeded]\n",
		"no-such-key":           "x",
	}).Data
	cfg, bad := loadNotificationConfig(data, map[string]string{"token": "s3cr3t-token"})
	var keys []string
	for _, b := range bad {
		keys = append(keys, b.key)
		if strings.Contains(b.err.Error(), "s3cr3t-token") {
			t.Errorf("%s: the error holds the secret: %v", b.key, b.err)
		}
	}
	want := "[defaultTriggers.slack no-such-key service.slack template.broken trigger.on-broken]"
	if sortedKeys := fmt.Sprint(sortStrings(keys)); sortedKeys != want {
		t.Errorf("left out %v, want %s (errors %v)", sortedKeys, want, bad)
	}
	if fmt.Sprint(cfg.Triggers()) != "[on-sync-succeeded]" || fmt.Sprint(cfg.Services()) != "[receiver]" {
		t.Errorf("loaded %s, want the good trigger and service", cfg)
	}
	if _, ok := data["template.broken"]; !ok {
		t.Error("the caller's data was modified")
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// tokenReceiver is a webhook endpoint that answers 500 until it is told
// the token to accept, then 200 to requests carrying it.
type tokenReceiver struct {
	mu       gosync.Mutex
	accept   string
	tries    int
	accepted []string
}

func (h *tokenReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tries++
	if h.accept == "" || r.Header.Get("X-Token") != h.accept {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	h.accepted = append(h.accepted, string(body))
}

func (h *tokenReceiver) state() (tries int, accepted []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tries, append([]string(nil), h.accepted...)
}

// TestOperatorNotificationFailureIsAWarningAndRetried: a notification
// whose webhook fails is a Warning Event on the Application, is not
// recorded in its notified annotation, and is sent by the next evaluation
// of the Application; argocd-notifications-secret's new token applies
// without a restart.
func TestOperatorNotificationFailureIsAWarningAndRetried(t *testing.T) {
	ns := cluster.TestNamespace(t)
	dest := cluster.TestNamespace(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	head, err := gs.CreateRepository(ctx, "app", fstest.MapFS{"app/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: retried}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	recv := &tokenReceiver{}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: notify.SecretName}, StringData: map[string]string{"token": "first-s3cret"}}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	cm := notificationsCM(ns, srv.URL, "1", nil)
	cm.Data["service.webhook.receiver"] += "retryMax: 1\nretryWaitMin: 10ms\nretryWaitMax: 20ms\n"
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	startOperator(t, ns)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "flaky",
		Annotations: map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.receiver": ""}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: gs.RepoURL("app"), Path: "app", TargetRevision: gs.Branch()},
			Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		}}
	waitUntil(t, func() string { return "create Application" }, func(ctx context.Context) bool {
		return c.Create(ctx, app.DeepCopy()) == nil
	})

	// The sync succeeds; its notification fails: a Warning Event on the
	// Application names it, and the annotation does not record it.
	var warnings []string
	waitUntil(t, func() string {
		return fmt.Sprintf("a %s Event on the Application: %v", ReasonNotificationFailed, warnings)
	},
		func(ctx context.Context) bool {
			list, err := kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=flaky,involvedObject.kind=Application"})
			if err != nil {
				return false
			}
			warnings = nil
			for _, e := range list.Items {
				if e.Reason == ReasonNotificationFailed && e.Type == corev1.EventTypeWarning {
					warnings = append(warnings, e.Message)
				}
			}
			return len(warnings) > 0
		})
	if w := warnings[0]; !strings.Contains(w, "on-sync-succeeded/app-sync-succeeded to receiver:") || !strings.Contains(w, "giving up after 2 attempt(s)") || strings.Contains(w, "s3cret") {
		t.Errorf("Event %q: want the trigger, template, destination and the webhook's retries, and no secret", w)
	}
	got := &v1alpha1.Application{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
		t.Fatal(err)
	}
	if a := got.Annotations[notify.NotifiedAnnotation]; strings.Contains(a, head) {
		t.Errorf("the failed notification is recorded as sent: %s", a)
	}

	// A new token in the Secret, which the receiver now takes: the next
	// evaluation of the Application (a change of it) delivers with it.
	recv.mu.Lock()
	recv.accept = "second-s3cret"
	recv.mu.Unlock()
	if err := c.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatal(err)
	}
	secret.StringData = map[string]string{"token": "second-s3cret"}
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	touch := 0
	waitUntil(t, func() string {
		tries, accepted := recv.state()
		return fmt.Sprintf("the notification delivered with the new token: %d tries, accepted %v", tries, accepted)
	}, func(ctx context.Context) bool {
		touch++
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"test/touch":"%d"}}}`, touch))
		_ = c.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch))
		_, accepted := recv.state()
		return len(accepted) > 0
	})
	waitUntil(t, func() string {
		return fmt.Sprintf("annotation %s recording the delivery: %v", notify.NotifiedAnnotation, got.Annotations)
	}, func(ctx context.Context) bool {
		return c.Get(ctx, client.ObjectKeyFromObject(app), got) == nil && strings.Contains(got.Annotations[notify.NotifiedAnnotation], head)
	})
	if _, accepted := recv.state(); len(accepted) != 1 || !strings.Contains(accepted[0], head) {
		t.Errorf("accepted %v, want one notification of revision %s", accepted, head)
	}
}
