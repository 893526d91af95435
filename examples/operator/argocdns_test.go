package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/config"
	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/sopsexe"
	"github.com/kubegitops/gitops/resource"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
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

// argoNamespace is testdata/argocd-namespace.yaml applied to the test
// cluster as README.md's walkthrough applies it, with the real Git
// server, a real webhook receiver and a second local cluster as the
// staging cluster.
type argoNamespace struct {
	c, remote           client.Client // the operator's cluster, the staging cluster
	ns                  string        // the operator's namespace ("argocd")
	teamNS, stagingNS   string        // destinations (stagingNS on both clusters)
	head                string        // the repository's revision
	recv                *hookReceiver // the webhook
	localCfg, remoteCfg *rest.Config
	sops                string // the gitops-sops program
	gs                  *gitserver.Server
	reg                 *chartserver.Registry // images of platform-images
}

// operatorArgs are README.md's command line's test-only additions: the
// interval, and SOPS with the age key of the Secret sops-age.
func (a *argoNamespace) operatorArgs() []string {
	return []string{"-interval", "5s", "-image-update-interval", "2s", "-sops", a.sops, "-sops-age-key-secret", "sops-age"}
}

// TestServesArgoCDNamespace applies testdata/argocd-namespace.yaml (an
// Argo CD namespace: argocd-cm, argocd-cmd-params-cm, argocd-rbac-cm,
// argocd-notifications-cm and -secret, two AppProjects, a cluster Secret
// of a second local cluster, a repository Secret of a private repository
// on the real Git server, Applications) as README.md's walkthrough does,
// with bad input added (a malformed cluster Secret, an unknown argocd-cm
// key, a notification template that does not parse), and starts the
// operator with the README's command line. Each bad input is an Event
// naming the object and key, and nothing else stops: the apps of both
// projects sync and are Healthy, on the in-cluster destination and on the
// second cluster; the app outside its project's destinations is refused
// with Argo CD's condition; a SOPS-encrypted Secret of Git is synced in
// plaintext; each subscribed app is notified once to a real webhook, and
// not again after the operator restarts; a cluster Secret rotated to
// another API server moves its apps there without a restart; an
// Application with Image Updater annotations gets a new tag committed to
// the Git server (write-back git) and syncs it, while the other apps,
// whose manifests did not change, are Synced at it without a sync or a
// notification; and the README holds the commands run here.
func TestServesArgoCDNamespace(t *testing.T) {
	a := applyArgoCDNamespace(t)
	// go run ./examples/operator -namespace argocd (and test-only
	// addresses, intervals and SOPS program: operatorArgs).
	stop := startOperatorArgs(t, a.ns, a.operatorArgs()...)

	a.waitSyncedOn(t, a.remote, map[string]string{"web-staging": "web", "platform-staging": "platform"})
	a.waitSyncedOn(t, a.c, map[string]string{"web": "web"})
	a.waitPlaintext(t, a.remote)
	a.waitRefused(t)
	a.waitBadInputReported(t)
	want := map[string]int{"web-staging@" + a.head: 1, "web@" + a.head: 1}
	a.waitNotifications(t, "one notification per subscribed app", want)

	// A new operator instance: the notified annotation says what was sent.
	stop()
	metrics := freeAddr(t)
	startOperatorArgs(t, a.ns, append(a.operatorArgs(), "-metrics-bind-address", metrics)...)
	waitUntil(t, func() string { return "the restarted operator evaluates both subscribed apps" }, func(context.Context) bool {
		return evaluations(t, metrics) >= 2
	})
	a.waitSyncedOn(t, a.remote, map[string]string{"web-staging": "web", "platform-staging": "platform"})

	// The staging Secret rotated to the operator's own API server: its
	// apps follow without a restart.
	a.rotateStaging(t, a.localCfg)
	a.waitSyncedOn(t, a.c, map[string]string{"web-staging": "web", "platform-staging": "platform"})
	a.waitPlaintext(t, a.c)
	a.waitNotifications(t, "no notification after the restart and the rotation (same revision)", want)

	// Image Updater: a new tag is committed to the Git server. The other
	// apps of the repository see the revision at their next refresh
	// (argocd-cm's timeout.reconciliation is 180s, so ask for one as a Git
	// webhook would): their manifests did not change, so, as in Argo CD,
	// they are Synced at it without a sync, and nothing is notified.
	rev := a.updateImage(t)
	a.refresh(t, "web", "web-staging")
	a.waitRevision(t, rev, "web", "web-staging")
	a.waitNotifications(t, "no notification for a revision that needed no sync", want)

	got := &v1alpha1.Application{}
	for _, name := range []string{"web", "web-staging", "platform-staging", "outside"} {
		if err := a.c.Get(context.Background(), types.NamespacedName{Namespace: a.ns, Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if st := fmt.Sprint(got.Status); strings.Contains(st, "deploy-SECRET-pw") || strings.Contains(st, sopsexe.Plaintext) {
			t.Errorf("%s: the status holds the repository password or the decrypted Secret", name)
		}
	}
}

// applyArgoCDNamespace checks README.md holds the walkthrough's commands,
// starts the Git server, the webhook and the staging cluster, and applies
// the fixture (with bad input added) as the walkthrough does.
func applyArgoCDNamespace(t *testing.T) *argoNamespace {
	t.Helper()
	ctx := context.Background()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range append([]string{"## Serving an Argo CD namespace"}, walkthroughCommands...) {
		if !strings.Contains(string(readme), cmd) {
			t.Errorf("README.md does not hold %q", cmd)
		}
	}
	a := &argoNamespace{ns: cluster.TestNamespace(t), teamNS: cluster.TestNamespace(t), stagingNS: cluster.TestNamespace(t),
		recv: &hookReceiver{}, localCfg: cluster.Config()}
	a.c = newArgoClient(t, a.localCfg)
	gopts := gitserver.DefaultOptions()
	gopts.ReadUsername, gopts.ReadPassword = "deploy", "deploy-SECRET-pw"
	// The Image Updater pushes with the repository Secret's credentials.
	gopts.PushUsername, gopts.PushPassword = gopts.ReadUsername, gopts.ReadPassword
	gs, err := gitserver.Start(ctx, gopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gs.Close() })
	a.gs, a.reg = gs, chartserver.NewRegistry(t, "", "")
	a.reg.PushImage("team/app", "1.0.0")
	kust := "resources: [cronjob.yaml]\nimages:\n- name: app\n  newName: " + a.reg.Host + "/team/app\n  newTag: 1.0.0\n"
	a.head, err = gs.CreateRepository(ctx, "team", fstest.MapFS{
		"images/kustomization.yaml": {Data: []byte(kust)}, "images/cronjob.yaml": {Data: []byte(webCronJob)},
		"app/cm.yaml":      {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {greeting: hello}\n")},
		"platform/cm.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: platform}\ndata: {greeting: hello}\n")},
		// Secret db, SOPS-encrypted for the age key of Secret sops-age.
		"platform/secret.enc.yaml": {Data: []byte(sopsexe.SecretYAML)},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.recv)
	t.Cleanup(srv.Close)
	a.startStaging(t)
	vars := map[string]string{
		"WEBHOOK_URL": srv.URL, "WEBHOOK_TOKEN": "s3cr3t-token",
		"GIT_URL": gs.RepoURL("team"), "GIT_USERNAME": "deploy", "GIT_PASSWORD": "deploy-SECRET-pw",
		"TEAM_NAMESPACE": a.teamNS, "STAGING_NAMESPACE": a.stagingNS,
		// The staging cluster is the second local cluster, reached with
		// the cluster Secret's token and CA.
		"STAGING_SERVER": a.remoteCfg.Host, "STAGING_TOKEN": a.remoteCfg.BearerToken,
		"STAGING_CA_DATA": base64.StdEncoding.EncodeToString(a.remoteCfg.CAData),
	}
	objs := expandFixture(t, vars)
	// kubectl apply -f examples/operator/config/
	if err := config.Install(ctx, a.c, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		o.SetNamespace(a.ns)
		waitUntil(t, func() string { return "create " + o.GetKind() + " " + o.GetName() }, func(ctx context.Context) bool {
			return a.c.Create(ctx, o.DeepCopy()) == nil
		})
	}
	// The age key, as KSOPS users keep it: keys.txt of a Secret.
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: "sops-age"}, StringData: map[string]string{"keys.txt": sopsexe.AgeKeys}}
	if err := a.c.Create(ctx, keys); err != nil {
		t.Fatal(err)
	}
	a.sops = sopsexe.Binary(t)
	return a
}

// expandFixture is testdata/argocd-namespace.yaml through envsubst (only
// vars replaced, $token stays), decoded, with bad input added: an
// unknown argocd-cm key, a notification template that does not parse and
// a cluster Secret whose config is not JSON.
func expandFixture(t *testing.T, vars map[string]string) []*unstructured.Unstructured {
	t.Helper()
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
	bad := map[string][2]string{
		"argocd-cm":               {"no.such.key", "x"},
		"argocd-notifications-cm": {"template.broken", "message: '{{.app.metadata.name'\n"},
	}
	for _, o := range objs {
		if kv, ok := bad[o.GetName()]; ok && o.GetKind() == "ConfigMap" {
			if err := unstructured.SetNestedField(o.Object, kv[1], "data", kv[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	broken := &unstructured.Unstructured{}
	broken.SetAPIVersion("v1")
	broken.SetKind("Secret")
	broken.SetName("cluster-broken")
	broken.SetLabels(map[string]string{"argocd.argoproj.io/secret-type": "cluster"})
	if err := unstructured.SetNestedStringMap(broken.Object, map[string]string{
		"name": "broken", "server": "https://broken.example.com:6443", "config": "{not json",
	}, "stringData"); err != nil {
		t.Fatal(err)
	}
	return append(objs, broken)
}
