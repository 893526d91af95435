package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops"
	appsetwebhook "github.com/kubegitops/gitops/appset/webhook"
	"github.com/kubegitops/gitops/examples/operator/appsets"
	"github.com/kubegitops/gitops/examples/operator/controller"
	srcwebhook "github.com/kubegitops/gitops/source/webhook"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// setupAppSets adds the ApplicationSet reconciler to mgr: it serves the
// sets of the namespaces whose Applications are served (the manager's
// cache), and writes Applications the Application reconciler deploys.
// With -applicationset-webhook-bind-address it serves the ApplicationSet
// webhook there.
func setupAppSets(mgr manager.Manager, engine *gitops.Engine, projects *controller.Projects, f flags, log logr.Logger) error {
	opts := appsets.DefaultOptions()
	opts.Engine, opts.Interval, opts.ControllerNamespace = engine, f.interval, f.namespace
	opts.Projects = projects
	opts.Log = log.WithName("applicationset")
	if err := appSetOptions(&opts, f.params); err != nil {
		return err
	}
	r, err := appsets.New(mgr.GetClient(), opts)
	if err != nil {
		return err
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	if f.appSetWebhook == "" || f.appSetWebhook == "0" {
		return nil
	}
	return mgr.Add(&appSetWebhook{addr: f.appSetWebhook, reconciler: r, reader: mgr.GetAPIReader(), namespace: f.namespace, log: opts.Log.WithName("webhook")})
}

// appSetWebhook serves /api/webhook: pull request events and pushes
// annotate the sets they concern for a refresh. Its secrets are
// argocd-secret's webhook.* keys, read at start.
type appSetWebhook struct {
	addr       string
	reconciler *appsets.Reconciler
	reader     client.Reader
	namespace  string
	log        logr.Logger
}

// webhookSecretKeys are argocd-secret's keys, as Argo CD names them.
var webhookSecretKeys = map[srcwebhook.Provider]string{
	srcwebhook.GitHub: "webhook.github.secret", srcwebhook.GitLab: "webhook.gitlab.secret", srcwebhook.Gitea: "webhook.gitea.secret",
	srcwebhook.Gogs: "webhook.gogs.secret", srcwebhook.BitbucketServer: "webhook.bitbucketserver.secret", srcwebhook.Bitbucket: "webhook.bitbucket.uuid",
}

// Start implements manager.Runnable.
func (w *appSetWebhook) Start(ctx context.Context) error {
	sec := &corev1.Secret{}
	if err := w.reader.Get(ctx, types.NamespacedName{Namespace: w.namespace, Name: "argocd-secret"}, sec); err != nil {
		w.log.Error(err, "argocd-secret not read: every webhook event will be refused")
	}
	secrets := srcwebhook.Secrets{}
	for p, k := range webhookSecretKeys {
		if v := string(sec.Data[k]); v != "" {
			secrets[p] = []string{v}
		}
	}
	h := appsetwebhook.NewHandler(appsetwebhook.Options{
		Secrets:             secrets,
		AzureDevOpsUsername: string(sec.Data["webhook.azuredevops.username"]), AzureDevOpsPassword: string(sec.Data["webhook.azuredevops.password"]),
		OnPullRequest: func(ctx context.Context, ev *appsetwebhook.PullRequestEvent) {
			sets, err := w.reconciler.RefreshPullRequest(ctx, ev)
			w.log.Info("pull request event", "provider", ev.Provider, "repository", ev.Owner+"/"+ev.Repo, "refreshed", sets, "error", errString(err))
		},
		OnPush: func(ctx context.Context, hint srcwebhook.Hint) {
			sets, err := w.reconciler.RefreshPush(ctx, hint)
			w.log.Info("push event", "provider", hint.Provider, "refreshed", sets, "error", errString(err))
		},
	})
	mux := http.NewServeMux()
	mux.Handle("/api/webhook", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second}
	ln, err := net.Listen("tcp", w.addr)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
