package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/config"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/resource"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// walkthroughVars are the variables README.md's "Serving an Argo CD
// namespace" has envsubst fill in testdata/argocd-namespace.yaml; only
// these are replaced ($token stays for argocd-notifications-cm).
var walkthroughVars = []string{"WEBHOOK_URL", "WEBHOOK_TOKEN", "GIT_URL", "GIT_USERNAME", "GIT_PASSWORD",
	"TEAM_NAMESPACE", "STAGING_NAMESPACE", "STAGING_SERVER", "STAGING_TOKEN", "STAGING_CA_DATA"}

// walkthroughCommands are README.md's commands, in order; the test checks
// the README holds each line and runs what they do.
var walkthroughCommands = []string{
	"kubectl create namespace argocd",
	"kubectl apply -f examples/operator/config/",
	"envsubst '" + envsubstList() + "' < examples/operator/testdata/argocd-namespace.yaml | kubectl apply -n argocd -f -",
	"go run ./examples/operator -namespace argocd",
}

func envsubstList() string {
	out := make([]string, len(walkthroughVars))
	for i, v := range walkthroughVars {
		out[i] = "${" + v + "}"
	}
	return strings.Join(out, " ")
}

// TestServesArgoCDNamespace applies testdata/argocd-namespace.yaml (an
// Argo CD namespace: argocd-cm, argocd-cmd-params-cm, argocd-rbac-cm,
// argocd-notifications-cm and -secret, an AppProject, a cluster Secret, a
// repository Secret of a private repository on the real Git server,
// Applications) as README.md's walkthrough does, and starts the operator
// with the README's command line: both apps of the project sync and are
// Healthy, on the in-cluster destination and on the cluster of the
// Secret; the app outside the project's destinations is refused with
// Argo CD's condition; each synced app is notified once to a real
// webhook; and the README holds the commands run here.
func TestServesArgoCDNamespace(t *testing.T) {
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	teamNS, stagingNS := cluster.TestNamespace(t), cluster.TestNamespace(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range append([]string{"## Serving an Argo CD namespace"}, walkthroughCommands...) {
		if !strings.Contains(string(readme), cmd) {
			t.Errorf("README.md does not hold %q", cmd)
		}
	}

	gopts := gitserver.DefaultOptions()
	gopts.ReadUsername, gopts.ReadPassword = "deploy", "deploy-SECRET-pw"
	gs, err := gitserver.Start(ctx, gopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gs.Close() })
	head, err := gs.CreateRepository(ctx, "team", fstest.MapFS{"app/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {greeting: hello}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	recv := &hookReceiver{}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	cfg := cluster.Config()
	vars := map[string]string{
		"WEBHOOK_URL": srv.URL, "WEBHOOK_TOKEN": "s3cr3t-token",
		"GIT_URL": gs.RepoURL("team"), "GIT_USERNAME": "deploy", "GIT_PASSWORD": "deploy-SECRET-pw",
		"TEAM_NAMESPACE": teamNS, "STAGING_NAMESPACE": stagingNS,
		// The staging cluster is the same API server under its own URL,
		// reached with the cluster Secret's token and CA.
		"STAGING_SERVER": cfg.Host, "STAGING_TOKEN": cfg.BearerToken, "STAGING_CA_DATA": base64.StdEncoding.EncodeToString(cfg.CAData),
	}
	data, err := os.ReadFile("testdata/argocd-namespace.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expanded := os.Expand(string(data), func(name string) string {
		if v, ok := vars[name]; ok {
			return v
		}
		return "$" + name // envsubst with a list leaves the others ($token)
	})
	objs, err := resource.Decode("argocd-namespace.yaml", []byte(expanded), resource.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), apiextensionsv1.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	// kubectl apply -f examples/operator/config/
	if err := config.Install(ctx, c, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		o.SetNamespace(ns)
		waitUntil(t, func() string { return "create " + o.GetKind() + " " + o.GetName() }, func(ctx context.Context) bool {
			return c.Create(ctx, o.DeepCopy()) == nil
		})
	}
	// go run ./examples/operator -namespace argocd (and test-only
	// addresses and interval).
	startOperatorArgs(t, ns, "-interval", "5s")

	got := &v1alpha1.Application{}
	app := func(name string) func(context.Context) bool {
		return func(ctx context.Context) bool {
			return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, got) == nil
		}
	}
	for name, dest := range map[string]string{"web": teamNS, "web-staging": stagingNS} {
		waitUntil(t, func() string { return fmt.Sprintf("%s Synced and Healthy: status %+v", name, got.Status) }, func(ctx context.Context) bool {
			return app(name)(ctx) && got.Status.Sync.Status == "Synced" && got.Status.Health.Status == "Healthy" && got.Status.Sync.Revision == head
		})
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: dest, Name: "web"}, cm); err != nil || cm.Data["greeting"] != "hello" {
			t.Errorf("%s: ConfigMap in %s: %v %v", name, dest, cm.Data, err)
		}
	}
	waitUntil(t, func() string {
		return fmt.Sprintf("outside refused by project team's destinations: status %+v", got.Status)
	}, func(ctx context.Context) bool {
		if !app("outside")(ctx) {
			return false
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == "InvalidSpecError" && strings.Contains(cond.Message, "kube-system") && strings.Contains(cond.Message, "destinations") {
				return got.Status.Sync.Status != "Synced"
			}
		}
		return false
	})
	waitUntil(t, func() string {
		_, posts := recv.revisions()
		return fmt.Sprintf("one notification per synced app: %v; refused %v", posts, recv.bad)
	}, func(context.Context) bool {
		_, posts := recv.revisions()
		byApp := map[string]int{}
		for _, p := range posts {
			byApp[p["app"]+"@"+p["revision"]]++
		}
		return fmt.Sprint(byApp) == fmt.Sprint(map[string]int{"web-staging@" + head: 1, "web@" + head: 1})
	})
	if strings.Contains(fmt.Sprint(got.Status), "deploy-SECRET-pw") {
		t.Error("a status holds the repository password")
	}
}
