package engine

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source/webhook"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func gitApp(name, url, branch, ns string) *Application {
	a := automated(&Application{Spec: ApplicationSpec{
		Source:      &ApplicationSource{RepoURL: url, Path: "app", TargetRevision: branch},
		Destination: ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}})
	a.Name = name
	return a
}

// A commit pushed to a real Git server is seen twice over: by an engine told
// through a signed GitHub webhook (its refresh interval is an hour, so only
// the webhook can explain it), and by an engine that polls. Both sync it
// and report the app Synced and Healthy at the new commit.
func TestGitCommitSeenByWebhookAndByPolling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gs, first := testfiles.GitRepo(t, gitserver.DefaultOptions(), "shop", fstest.MapFS{
		"app/web.yaml": {Data: []byte(webApp)},
		"README.md":    {Data: []byte("a demo repository\n")},
	})
	url := gs.RepoURL("shop")
	nsHook, nsPoll := cluster.TestNamespace(t), cluster.TestNamespace(t)

	hooked := newEngine(t, func(o *Options) { o.Interval = time.Hour })
	handler := webhook.NewHandler(webhook.Options{
		Secrets:      map[webhook.Provider][]string{webhook.GitHub: {"s3cret"}},
		MaxBodyBytes: 1 << 20,
		OnPush: func(_ context.Context, h webhook.Hint) {
			for _, u := range h.RepositoryURLs {
				hooked.Apps().Hint(u)
			}
		},
	})
	hookServer := httptest.NewServer(handler)
	t.Cleanup(hookServer.Close)

	// The polling engine uses the engine's own Git source with its default
	// ref cache: the cache must follow the interval (it once held refs for a
	// minute whatever the interval, so a push took up to a minute to see).
	polling := newEngine(t, func(o *Options) { o.Interval = time.Second })
	hookApp := gitApp(nsHook, url, gs.Branch(), nsHook)
	pollApp := gitApp(nsPoll, url, gs.Branch(), nsPoll)
	startRun(t, hooked, hookApp)
	startRun(t, polling, pollApp)

	for _, c := range []struct {
		e   *Engine
		app *Application
	}{{hooked, hookApp}, {polling, pollApp}} {
		eventually(t, 2*time.Minute, c.app.Name+" Synced and Healthy", func() bool {
			st, ok := c.e.Apps().AppStatus(v1alpha1.KeyOf(c.app))
			return ok && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy && st.Revision == first
		})
	}

	second, err := gs.Commit(ctx, "shop", "greet differently", map[string][]byte{
		"app/web.yaml": bytes.Replace([]byte(webApp), []byte("greeting: hello"), []byte("greeting: bonjour"), 1),
	})
	if err != nil {
		t.Fatal(err)
	}
	pushed := time.Now()
	body := fmt.Sprintf(`{"ref":"refs/heads/%s","after":"%s","repository":{"clone_url":%q},"commits":[{"modified":["app/web.yaml"]}]}`, gs.Branch(), second, url)
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte(body))
	req, _ := http.NewRequest(http.MethodPost, hookServer.URL, bytes.NewReader([]byte(body)))
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("webhook answered %s", resp.Status)
	}

	cs, _ := kubernetes.NewForConfig(cluster.Config())
	for _, c := range []struct {
		e   *Engine
		app *Application
		ns  string
	}{{hooked, hookApp, nsHook}, {polling, pollApp, nsPoll}} {
		eventually(t, 2*time.Minute, c.app.Name+" at the new commit", func() bool {
			cm, err := cs.CoreV1().ConfigMaps(c.ns).Get(ctx, "settings", metav1.GetOptions{})
			st, _ := c.e.Apps().AppStatus(v1alpha1.KeyOf(c.app))
			return err == nil && cm.Data["greeting"] == "bonjour" && st.Revision == second && st.Sync == appstatus.Synced
		})
	}
	if took := time.Since(pushed); took > 20*time.Second {
		t.Fatalf("the push took %s to be synced by polling every second", took)
	}
	if h, _ := hooked.History(ctx, v1alpha1.KeyOf(hookApp)); len(h) != 2 || h[1].Revisions[0] != second {
		t.Fatalf("history %+v", h)
	}
}
