package enginetest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/cache/store/redisstore"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/redistest"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/notify"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// brokenGreeting is an Argo CD style Lua health override: a ConfigMap
// whose greeting is "broken" is Degraded.
const brokenGreeting = `hs = {}
if obj.data ~= nil and obj.data.greeting == "broken" then
  hs.status = "Degraded"
  hs.message = "greeting is broken"
else
  hs.status = "Healthy"
end
return hs`

// instance is one engine and notification controller, as one process of
// a host runs them.
type instance struct {
	engine *gitops.Engine
	ctl    *notify.Controller
	reg    *prometheus.Registry
	stop   func()
}

func start(t *testing.T, cfg *notify.Config, state notify.State, app *gitops.Application) *instance {
	t.Helper()
	checker, err := health.NewChecker(health.Options{Lua: health.DefaultLuaOptions(), Overrides: map[string]string{"ConfigMap": brokenGreeting}})
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{reg: prometheus.NewRegistry()}
	in.ctl, err = notify.NewController(cfg, notify.ControllerOptions{State: state, Registerer: in.reg,
		Application: func(name string) (*gitops.Application, bool) { return app, name == app.Name },
		Status: func(name string) (appstatus.Status, bool) {
			return in.engine.Apps().AppStatus(v1alpha1.AppKey{Name: name})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	opts.Interval, opts.Health, opts.Notify = time.Hour, checker, in.ctl.Notify
	if in.engine, err = gitops.New(opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg gosync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = in.ctl.Run(ctx) }()
	go func() { defer wg.Done(); _ = in.engine.Run(ctx, []gitops.Application{*app}) }()
	var once gosync.Once
	in.stop = func() { once.Do(func() { cancel(); wg.Wait(); in.engine.Close() }) }
	t.Cleanup(in.stop)
	return in
}

func (in *instance) waitHealth(t *testing.T, app string, code health.Code) {
	t.Helper()
	waitFor(t, "health "+string(code)+" and notifications settled", func() bool {
		st, ok := in.engine.Apps().AppStatus(v1alpha1.AppKey{Name: app})
		return ok && st.Health.Code == code && in.ctl.Idle()
	})
}

func TestDegradedOnceUntilRecoveredAndNotAgainAfterRestart(t *testing.T) {
	ns := cluster.TestNamespace(t)
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	state := notify.NewStoreState(redisstore.New(client, redisstore.DefaultOptions()), 0)

	var mu gosync.Mutex
	var bodies []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
	}))
	defer recv.Close()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(bodies) }

	cfg, err := notify.Load(notify.WithCatalog(map[string]string{
		"service.webhook.receiver":     "url: " + recv.URL,
		"template.app-health-degraded": `webhook: {receiver: {method: POST, body: '{{.app.metadata.name}} {{.app.status.health.status}}: {{.app.status.health.message}}'}}`,
	}), nil, notify.DefaultLoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	dir := testfiles.Tree(t, map[string]string{"app/web.yaml": testfiles.WebApp})
	app := &gitops.Application{Spec: gitops.ApplicationSpec{
		Source:      &gitops.ApplicationSource{RepoURL: dir, Path: "app"},
		Destination: gitops.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
		SyncPolicy:  &gitops.SyncPolicy{Automated: &gitops.SyncPolicyAutomated{}}, // no selfHeal: drift stays
	}}
	app.Name, app.Namespace = ns, "argocd"
	app.Annotations = map[string]string{"notifications.argoproj.io/subscribe.on-health-degraded.receiver": ""}

	first := start(t, cfg, state, app)
	first.waitHealth(t, app.Name, health.Healthy)
	if n := count(); n != 0 {
		t.Fatalf("%d webhooks for a healthy app", n)
	}
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	setGreeting := func(v string) {
		t.Helper()
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "settings", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["greeting"] = v
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setGreeting("broken")
	first.waitHealth(t, app.Name, health.Degraded)
	waitFor(t, "the webhook", func() bool { return count() == 1 })
	mu.Lock()
	if !strings.HasPrefix(bodies[0], app.Name+" Degraded: ") || !strings.HasSuffix(bodies[0], "greeting is broken") {
		t.Errorf("body %q", bodies[0])
	}
	mu.Unlock()

	// Recovered, then degraded again: a second notification.
	setGreeting("hello")
	first.waitHealth(t, app.Name, health.Healthy)
	if n := count(); n != 1 {
		t.Fatalf("%d webhooks after recovery, want still 1", n)
	}
	setGreeting("broken")
	first.waitHealth(t, app.Name, health.Degraded)
	waitFor(t, "the second degradation's webhook", func() bool { return count() == 2 })
	first.stop()

	// A restart (a new engine and controller, the same Redis) sees the
	// app degraded and sends nothing: it was sent already.
	second := start(t, cfg, state, app)
	second.waitHealth(t, app.Name, health.Degraded)
	waitFor(t, "on-health-degraded evaluated (matching) after the restart", func() bool {
		return counterValue(t, second.reg, "gitops_notifications_trigger_evaluations_total",
			map[string]string{"trigger": "on-health-degraded", "matched": "true"}) >= 1 && second.ctl.Idle()
	})
	if n := count(); n != 2 {
		t.Fatalf("%d webhooks after the restart, want still 2", n)
	}
}
