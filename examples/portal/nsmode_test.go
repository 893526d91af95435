package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/testtools"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// chartFiles is a Helm chart without a helm block in the Application: the
// source is detected as Helm from its Chart.yaml.
var chartFiles = map[string]string{
	"chart/Chart.yaml":            "apiVersion: v2\nname: hello\nversion: 0.1.0\n",
	"chart/values.yaml":           "message: hello\nreplicas: 1\n",
	"chart/templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata:\n  message: {{ .Values.message | quote }}\n",
}

// overlayFiles is a Kustomize overlay without a kustomize block in the
// Application: the source is detected from its kustomization.
var overlayFiles = map[string]string{
	"overlay/kustomization.yaml": "resources: [deploy.yaml]\n",
	"overlay/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.k8s.io/guestbook:v3"}]
`,
}

// nsPortal is a portal over an operator's namespace (--namespace).
type nsPortal struct {
	*fixture
	b *nsBackend
}

// startNamespacePortal starts the portal over namespace ns as serve does
// with --namespace, as the fixture's admin.
func startNamespacePortal(t *testing.T, ns string) *nsPortal {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pol, err := loadPolicy(write("policy.yaml", fixturePolicy))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := loadTokenFile(write("tokens.txt", fixtureTokens))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ns: ns, audit: &syncBuffer{}, log: &syncBuffer{}}
	if f.kube, err = kubernetes.NewForConfig(cluster.Config()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := gitops.DefaultOptions()
	clusters := []gitops.ClusterConfig{{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: cluster.Config()}}
	b, apps, refused, err := openNamespaceOptions(ctx, ns, clusters, f.kube, &opts, f.log)
	if err != nil {
		t.Fatal(err)
	}
	f.portal, err = startPortal(context.Background(), portalConfig{Engine: opts, Apps: apps, Kube: f.kube, Tokens: tokens, Policy: pol,
		RefusedProjects: refused, Namespace: b, Audit: f.audit, Log: f.log})
	if err != nil {
		b.close()
		t.Fatal(err)
	}
	f.http = httptest.NewServer(f.portal.srv)
	return &nsPortal{fixture: f, b: b}
}

// stop stops the portal (a restart is stop, then startNamespacePortal).
func (p *nsPortal) stop() {
	p.http.CloseClientConnections()
	p.http.Close()
	p.portal.close()
	p.b.close()
}

// startOperator runs the operator program over namespace ns until the
// test ends.
func startOperator(t *testing.T, ns string) *syncBuffer {
	t.Helper()
	bin, err := testtools.Operator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	cmd := exec.Command(bin, "-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-interval", "1m",
		"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-notifications=false", "-image-update-interval", "0")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("operator:\n%s", out.String())
		}
	})
	return out
}

func nsClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNamespaceModeEditReachesOperator is the user story: a portal
// over the operator's namespace edits a Helm parameter of an app whose
// chart is auto-detected (no helm block); the edit is written to the
// Application object, the operator syncs it, and it survives a restart of
// the portal. The parameter table lists the chart's values with the
// override marked.
func TestNamespaceModeEditReachesOperator(t *testing.T) {
	ns := cluster.TestNamespace(t)
	dest := cluster.TestNamespace(t)
	dest2 := cluster.TestNamespace(t)
	repo := t.TempDir()
	files := map[string]string{}
	for name, text := range chartFiles {
		files[name] = text
	}
	for name, text := range overlayFiles {
		files[name] = text
	}
	for name, text := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	startOperator(t, ns)
	c := nsClient(t)
	ctx := context.Background()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + repo, Path: "chart"},
		Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
	}}
	// The operator installs the CRD: create once it is served.
	waitFor(t, 2*time.Minute, "the Application created", func() (bool, string) {
		err := c.Create(ctx, app.DeepCopy())
		return err == nil, errString(err)
	})
	kust := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + repo, Path: "overlay"},
		Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest2},
	}}
	if err := c.Create(ctx, kust); err != nil {
		t.Fatal(err)
	}
	waitConfigMapIn(t, c, dest, "hello")

	p := startNamespacePortal(t, ns)
	csrf := p.csrfOf(tokAdmin)
	params := p.parameters("hello")
	if len(params) != 1 || params[0].Type != sourceHelm || params[0].Helm == nil {
		t.Fatalf("parameters of the detected chart: %+v", params)
	}
	if row := paramRow(params[0].Helm, "message"); row == nil || row.Value != "hello" || row.Override != nil || !row.InChart {
		t.Fatalf("message before the edit: %+v", row)
	}
	code, _, raw := p.call("POST", "/api/v1/apps/hello/details", tokAdmin, csrf,
		map[string]any{"helmParameters": []map[string]any{{"name": "message", "value": "edited"}}})
	if code != http.StatusOK {
		t.Fatalf("edit: %d %s", code, raw)
	}
	got := &v1alpha1.Application{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "hello"}, got); err != nil {
		t.Fatal(err)
	}
	if h := got.Spec.Source.Helm; h == nil || len(h.Parameters) != 1 || h.Parameters[0].Name != "message" || h.Parameters[0].Value != "edited" {
		t.Fatalf("Application object after the edit: helm %+v", got.Spec.Source.Helm)
	}
	if !strings.Contains(p.audit.String(), `"action":"details"`) {
		t.Errorf("the edit is not audited: %s", p.audit.String())
	}
	waitConfigMapIn(t, c, dest, "edited") // the operator synced the edit
	checkNamespaceKustomize(t, p, c, ns, dest2)

	p.stop()
	p = startNamespacePortal(t, ns)
	defer p.stop()
	row := paramRow(p.parameters("hello")[0].Helm, "message")
	if row == nil || row.Override == nil || *row.Override != "edited" || row.Value != "hello" {
		t.Fatalf("message after a restart of the portal: %+v", row)
	}
	waitFor(t, time.Minute, "the portal shows the operator's Synced status", func() (bool, string) {
		a, ok := p.portal.srv.app("hello")
		if !ok {
			return false, "not served"
		}
		st, ok := p.portal.srv.appStatus(a)
		return ok && st.Sync == "Synced", string(st.Sync)
	})
}

// parameters reads the parameter table of app as the fixture's admin.
func (f *fixture) parameters(app string) []sourceParams {
	f.t.Helper()
	code, _, raw := f.call("GET", "/api/v1/apps/"+app+"/parameters", tokAdmin, "", nil)
	if code != http.StatusOK {
		f.t.Fatalf("parameters of %s: %d %s", app, code, raw)
	}
	var out []sourceParams
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		f.t.Fatal(err)
	}
	return out
}

func paramRow(h *helmParams, name string) *helmParam {
	if h == nil {
		return nil
	}
	for i := range h.Parameters {
		if h.Parameters[i].Name == name {
			return &h.Parameters[i]
		}
	}
	return nil
}

// waitConfigMapIn waits until ConfigMap hello of ns says message.
func waitConfigMapIn(t *testing.T, c client.Client, ns, message string) {
	t.Helper()
	waitFor(t, 2*time.Minute, "ConfigMap hello says "+message, func() (bool, string) {
		cm := &corev1.ConfigMap{}
		err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "hello"}, cm)
		return err == nil && cm.Data["message"] == message, cm.Data["message"] + errString(err)
	})
}

// TestNamespaceFlags checks that --namespace replaces --apps and refuses,
// by name, the flags whose objects it reads from the namespace; the other
// required flags stay required.
func TestNamespaceFlags(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	for args, want := range map[string]string{
		"--namespace argocd":                               "--policy",
		"--namespace argocd --policy p --token-file t":     "--kubeconfig",
		"--namespace argocd --apps d":                      "--apps and --namespace exclude each other",
		"--namespace argocd --projects p":                  "--projects and --projects-namespace do not go with --namespace",
		"--namespace argocd --projects-namespace x":        "--projects and --projects-namespace do not go with --namespace",
		"--namespace argocd --cluster-secrets-namespace x": "--cluster-secrets-namespace does not go with --namespace",
	} {
		if _, err := parseFlags(strings.Fields(args), io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", args, err, want)
		}
	}
	f, err := parseFlags(strings.Fields("--namespace argocd --policy p --token-file t --kubeconfig k"), io.Discard)
	if err != nil || f.namespace != "argocd" || f.apps != "" {
		t.Errorf("--namespace: %+v %v", f, err)
	}
}

// checkNamespaceKustomize edits the image of the detected overlay of app
// web through the portal, and syncs it through the portal: the operator
// runs the operation the portal wrote, as the user who asked.
func checkNamespaceKustomize(t *testing.T, p *nsPortal, c client.Client, ns, dest string) {
	t.Helper()
	ctx := context.Background()
	params := p.parameters("web")
	if len(params) != 1 || params[0].Type != sourceKustomize || params[0].Kustomize == nil ||
		len(params[0].Kustomize.Images) != 1 || params[0].Kustomize.Images[0].Image != "registry.k8s.io/guestbook:v3" || params[0].Kustomize.Images[0].Override != "" {
		t.Fatalf("parameters of the detected overlay: %+v", params)
	}
	csrf := p.csrfOf(tokAdmin)
	code, _, raw := p.call("POST", "/api/v1/apps/web/details", tokAdmin, csrf, map[string]any{"kustomizeImages": []string{"registry.k8s.io/guestbook:v4"}})
	if code != http.StatusOK {
		t.Fatalf("edit the image: %d %s", code, raw)
	}
	got := &v1alpha1.Application{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, got); err != nil {
		t.Fatal(err)
	}
	if k := got.Spec.Source.Kustomize; k == nil || len(k.Images) != 1 || k.Images[0] != "registry.k8s.io/guestbook:v4" {
		t.Fatalf("Application object after the image edit: kustomize %+v", got.Spec.Source.Kustomize)
	}
	if img := p.parameters("web")[0].Kustomize.Images; len(img) != 1 || img[0].Image != "registry.k8s.io/guestbook:v4" || img[0].Override != "registry.k8s.io/guestbook:v4" {
		t.Fatalf("images after the edit: %+v", img)
	}
	code, _, raw = p.call("POST", "/api/v1/apps/web/sync", tokAdmin, csrf, map[string]any{})
	if code != http.StatusAccepted {
		t.Fatalf("sync: %d %s", code, raw)
	}
	waitFor(t, 2*time.Minute, "the operator synced web as alice", func() (bool, string) {
		a := &v1alpha1.Application{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, a); err != nil {
			return false, err.Error()
		}
		op := a.Status.OperationState
		if op == nil {
			return false, "no operation"
		}
		return op.Phase == "Succeeded" && op.Operation.InitiatedBy.Username == "alice", op.Phase + " " + op.Operation.InitiatedBy.Username + " " + op.Message
	})
	dep, err := p.kube.AppsV1().Deployments(dest).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != "registry.k8s.io/guestbook:v4" {
		t.Fatalf("Deployment after the sync: %v", err)
	}
	p.waitAudit("sync", "Succeeded", 1)
}
