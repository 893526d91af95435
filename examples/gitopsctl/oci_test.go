package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops/internal/chartserver"
)

// ociRelease is a Kustomize base and a prod overlay whose ConfigMap says
// which release it is.
func ociRelease(release string) map[string]string {
	return map[string]string{
		"base/kustomization.yaml":          "resources: [cm.yaml]\n",
		"base/cm.yaml":                     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  release: \"" + release + "\"\n",
		"overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: prod-\n",
	}
}

// An app whose source is an OCI artifact, in a private registry over TLS
// (its CA in argocd-tls-certs-cm) with basic auth, used as a user lives
// it through gitopsctl with the Argo CD repository Secret of --repositories:
// rendered offline, synced, its status at the artifact's digest; a new tag
// under the constraint synced by the next sync, with the Secret read from
// the cluster this time (--repositories cluster:NS); without credentials
// the sync fails, naming the registry and never the password.
func TestOCIArtifactThroughGitopsctl(t *testing.T) {
	const password = "oci-SECRET-pw"
	reg := chartserver.NewArtifactRegistry(t, chartserver.ArtifactOptions{Username: "robot", Password: password, TLS: true})
	d100 := reg.Push("org/shop", "1.0.0", ociRelease("one"))
	ns := cluster.TestNamespace(t)
	dir := t.TempDir()
	appFile := filepath.Join(dir, "app.yaml")
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop}
spec:
  project: default
  source: {repoURL: "` + reg.URL("org/shop") + `", targetRevision: "~1.0", path: overlays/prod}
  destination: {server: https://kubernetes.default.svc, namespace: ` + ns + `}
`
	secret := `apiVersion: v1
kind: Secret
metadata:
  name: registry
  labels: {argocd.argoproj.io/secret-type: repository}
stringData: {url: "` + reg.URL("org/shop") + `", type: oci, username: robot, password: ` + password + `}
`
	certs := `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-tls-certs-cm}
data:
  127.0.0.1: |
` + padLines(string(reg.CAData), "    ")
	reposFile := filepath.Join(dir, "repos.yaml")
	for f, body := range map[string]string{appFile: app, reposFile: secret + "---\n" + certs} {
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	noSecret := func(out string) {
		t.Helper()
		if strings.Contains(out, password) {
			t.Fatalf("the registry password was printed:\n%s", out)
		}
	}

	code, out, errOut := runCLI(t, "render", "--offline", "--app", appFile, "--repositories", reposFile)
	noSecret(out + errOut)
	if code != 0 {
		t.Fatalf("render --offline: exit %d\n%s", code, errOut)
	}
	mustContain(t, "offline render", out, "name: prod-settings", "release: one")

	code, out, errOut = runCLI(t, "sync", "--app", appFile, "--repositories", reposFile, "--kubeconfig", cluster.Kubeconfig())
	noSecret(out + errOut)
	if code != 0 {
		t.Fatalf("sync: exit %d\n%s\n%s", code, out, errOut)
	}
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "prod-settings", metav1.GetOptions{})
	if err != nil || cm.Data["release"] != "one" {
		t.Fatalf("ConfigMap after the first sync: %v %v", cm.Data, err)
	}
	code, out, errOut = runCLI(t, "status", "--app", appFile, "--repositories", reposFile, "--kubeconfig", cluster.Kubeconfig())
	noSecret(out + errOut)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "status", out, "Sync:      Synced", "Revision:  "+d100)

	// The step after: a new tag under ~1.0, the Secret and the CA read from
	// the cluster's namespace this time.
	d101 := reg.Push("org/shop", "1.0.1", ociRelease("two"))
	reg.Push("org/shop", "2.0.0", ociRelease("three")) // outside ~1.0
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry", Labels: map[string]string{"argocd.argoproj.io/secret-type": "repository"}},
		StringData: map[string]string{"url": reg.URL("org/shop"), "type": "oci", "username": "robot", "password": password},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-tls-certs-cm"},
		Data:       map[string]string{"127.0.0.1": string(reg.CAData)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "sync", "--app", appFile, "--repositories", "cluster:"+ns, "--kubeconfig", cluster.Kubeconfig())
	noSecret(out + errOut)
	if code != 0 {
		t.Fatalf("second sync: exit %d\n%s\n%s", code, out, errOut)
	}
	cm, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "prod-settings", metav1.GetOptions{})
	if err != nil || cm.Data["release"] != "two" {
		t.Fatalf("ConfigMap after 1.0.1: %v %v", cm.Data, err)
	}
	code, out, errOut = runCLI(t, "status", "--app", appFile, "--repositories", "cluster:"+ns, "--kubeconfig", cluster.Kubeconfig())
	noSecret(out + errOut)
	mustContain(t, "status after 1.0.1", out, "Sync:      Synced", "Revision:  "+d101)

	// Without credentials the registry refuses, and the command says which.
	code, out, errOut = runCLI(t, "sync", "--app", appFile, "--kubeconfig", cluster.Kubeconfig())
	noSecret(out + errOut)
	if code == 0 {
		t.Fatalf("sync without credentials: exit 0\n%s\n%s", out, errOut)
	}
	mustContain(t, "sync without credentials", out+errOut, reg.Host)

	// A --repositories that does not load fails the command by name.
	code, _, errOut = runCLI(t, "sync", "--app", appFile, "--repositories", filepath.Join(dir, "missing.yaml"), "--kubeconfig", cluster.Kubeconfig())
	if code == 0 || !strings.Contains(errOut, "--repositories") || !strings.Contains(errOut, "missing.yaml") {
		t.Fatalf("sync with a missing --repositories file: exit %d\n%s", code, errOut)
	}
}
