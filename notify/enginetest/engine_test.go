package enginetest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/notify"
	"github.com/kubegitops/gitops/sync"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// webhookCM is an argocd-notifications-cm with a webhook service whose
// token is in the secret, and the catalog's on-sync-succeeded trigger
// sending a webhook template.
const webhookTemplate = `webhook:
  receiver:
    method: POST
    path: /synced
    body: '{"app":"{{.app.metadata.name}}","revision":"{{.app.status.operationState.syncResult.revision}}","phase":"{{.app.status.operationState.phase}}"}'
`

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestSuccessfulSyncSendsOneWebhook(t *testing.T) {
	ns := cluster.TestNamespace(t)
	var mu gosync.Mutex
	var bodies []string
	var auth []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.Method+" "+r.URL.Path+" "+string(b))
		auth = append(auth, r.Header.Get("X-Token"))
		mu.Unlock()
	}))
	defer recv.Close()
	received := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), bodies...) }

	// The configuration comes from the cluster, as Argo CD's does.
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data := notify.WithCatalog(map[string]string{
		"service.webhook.receiver":    "url: " + recv.URL + "\nheaders: [{name: X-Token, value: $receiver-token}]",
		"template.app-sync-succeeded": webhookTemplate,
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: notify.ConfigMapName, Namespace: ns}, Data: data}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: notify.SecretName, Namespace: ns}, StringData: map[string]string{"receiver-token": "tok-e2e"}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := notify.LoadFromCluster(ctx, cs, ns, notify.DefaultLoadOptions())
	if err != nil {
		t.Fatal(err)
	}

	dir := testfiles.Tree(t, map[string]string{"app/web.yaml": testfiles.WebApp})
	app := &gitops.Application{Spec: gitops.ApplicationSpec{
		Source:      &gitops.ApplicationSource{RepoURL: dir, Path: "app"},
		Destination: gitops.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
		SyncPolicy:  &gitops.SyncPolicy{Automated: &gitops.SyncPolicyAutomated{}},
	}}
	app.Name, app.Namespace = ns, "argocd"
	app.Annotations = map[string]string{"notifications.argoproj.io/subscribe.on-sync-succeeded.receiver": ""}

	var engine *gitops.Engine
	ctl, err := notify.NewController(cfg, notify.ControllerOptions{
		Registerer:  prometheus.NewRegistry(),
		Application: func(name string) (*gitops.Application, bool) { return app, name == app.Name },
		Status: func(name string) (appstatus.Status, bool) {
			return engine.Apps().AppStatus(v1alpha1.AppKey{Name: name})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	opts.Interval = time.Hour
	opts.Notify = ctl.Notify
	engine, err = gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()

	runCtx, cancel := context.WithCancel(ctx)
	var wg gosync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = ctl.Run(runCtx) }()
	go func() { defer wg.Done(); _ = engine.Run(runCtx, []gitops.Application{*app}) }()
	defer func() { cancel(); wg.Wait() }()

	// Run refreshes, syncs (automated) and refreshes again.
	var st appstatus.Status
	waitFor(t, "Synced and Healthy", func() bool {
		var ok bool
		st, ok = engine.Apps().AppStatus(v1alpha1.KeyOf(app))
		return ok && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy
	})
	waitFor(t, "the webhook", func() bool { return len(received()) > 0 })
	waitFor(t, "notifications to settle", ctl.Idle)
	want := `POST /synced {"app":"` + app.Name + `","revision":"` + st.Revision + `","phase":"Succeeded"}`
	mu.Lock()
	tokens := append([]string(nil), auth...)
	mu.Unlock()
	if got := received(); len(got) != 1 || got[0] != want || tokens[0] != "tok-e2e" {
		t.Fatalf("webhooks %q, want exactly one: %s (with the secret's token: %v)", got, want, tokens[0] == "tok-e2e")
	}

	// The step after: the refreshes that follow send nothing more (the
	// condition still holds, its key is recorded); a new sync operation
	// of the same revision sends nothing either: the trigger's oncePer
	// key (the revision) is never forgotten, as in Argo CD, even while
	// the condition is false during the operation.
	if _, err := engine.Refresh(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "notifications to settle", ctl.Idle)
	if got := received(); len(got) != 1 {
		t.Fatalf("after a refresh: %d webhooks, want 1", len(got))
	}
	res, err := engine.Sync(ctx, app, gitops.SyncRequest{Manual: true})
	if err != nil || res.Phase != sync.Succeeded {
		t.Fatalf("second sync: %v %s", err, res.Summary())
	}
	waitFor(t, "notifications to settle", ctl.Idle)
	if got := received(); len(got) != 1 {
		t.Fatalf("after a second sync of the same revision: webhooks %q, want still only the first", got)
	}
}
