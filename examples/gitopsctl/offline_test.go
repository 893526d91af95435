package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// offlineChartApp serves a chart over HTTPS with basic auth and a private
// CA, writes Argo CD repository Secrets for it (a repo-creds template and
// argocd-tls-certs-cm) and an Application of it; it returns the app file
// and the repositories file.
func offlineChartApp(t *testing.T) (appFile, reposFile string) {
	t.Helper()
	r := chartserver.New(t, chartserver.Options{TLS: true, Username: "ci", Password: "ci-SECRET-pw"})
	r.Add(chartserver.Chart(t, "caps", "2.0.0", map[string]string{
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: caps
data:
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  hasWidgets: {{ .Capabilities.APIVersions.Has "example.com/v1" | quote }}
`,
	}))
	dir := t.TempDir()
	appFile = filepath.Join(dir, "app.yaml")
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: caps}
spec:
  project: default
  source: {repoURL: "` + r.URL + `", chart: caps, targetRevision: "2.x"}
  destination: {server: https://kubernetes.default.svc, namespace: ci}
`
	reposFile = filepath.Join(dir, "repos.yaml")
	repos := `apiVersion: v1
kind: Secret
metadata:
  name: charts
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: repo-creds}
stringData: {url: "` + r.URL + `", username: ci, password: ci-SECRET-pw}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-tls-certs-cm, namespace: argocd}
data:
  127.0.0.1: |
` + padLines(string(r.CAPEM), "    ")
	for f, body := range map[string]string{appFile: app, reposFile: repos} {
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return appFile, reposFile
}

func padLines(s, pad string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return pad + strings.Join(lines, "\n"+pad) + "\n"
}

// render --offline renders a chart from an HTTPS repository with the
// credentials of an Argo CD repositories file, for the --kube-version and
// --api-versions given, with no cluster; without a kubeconfig it does the
// same after a one-line notice.
func TestRenderOffline(t *testing.T) {
	appFile, reposFile := offlineChartApp(t)
	code, out, errOut := runCLI(t, "render", "--offline", "--app", appFile, "--repositories", reposFile,
		"--kube-version", "1.29.3", "--api-versions", "example.com/v1,other.io/v2")
	if code != 0 {
		t.Fatalf("render --offline: exit %d\n%s", code, errOut)
	}
	mustContain(t, "offline render", out, "name: caps", `kube: v1.29.3`, `hasWidgets: "true"`)
	if strings.Contains(out+errOut, "ci-SECRET-pw") {
		t.Fatal("the repository password was printed")
	}
	code, out, errOut = runCLI(t, "render", "--kubeconfig", filepath.Join(t.TempDir(), "none"), "--app", appFile, "--repositories", reposFile)
	if code != 0 || !strings.Contains(errOut, "rendering offline") || strings.Count(errOut, "\n") != 1 || !strings.Contains(out, `hasWidgets: "false"`) {
		t.Fatalf("render without a kubeconfig: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// A field Argo CD reads elsewhere, or not at all, costs nothing but a
	// line on stderr naming it: the Secret still serves.
	data, err := os.ReadFile(reposFile)
	if err != nil {
		t.Fatal(err)
	}
	withTypo := filepath.Join(t.TempDir(), "repos.yaml")
	body := strings.Replace(string(data), "password: ci-SECRET-pw}", "password: ci-SECRET-pw, passwd: typo-SECRET, enableLfs: \"true\"}", 1)
	if err := os.WriteFile(withTypo, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "render", "--offline", "--app", appFile, "--repositories", withTypo)
	if code != 0 || !strings.Contains(out, "name: caps") || !strings.Contains(errOut, `"passwd"`) || !strings.Contains(errOut, `"enableLfs"`) ||
		strings.Contains(errOut, "SECRET") {
		t.Fatalf("render with a misspelt field: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// Without the credentials the repository refuses, and says so.
	code, _, errOut = runCLI(t, "render", "--offline", "--app", appFile)
	if code == 0 || strings.Contains(errOut, "ci-SECRET-pw") {
		t.Fatalf("render without credentials: exit %d\n%s", code, errOut)
	}
}

// diff --live-dir compares the offline render with a recorded live state:
// identical is exit 0; a changed field and an object tracked as the app's
// but no longer rendered are exit 1 with both shown.
func TestDiffAgainstALiveDir(t *testing.T) {
	appFile, reposFile := offlineChartApp(t)
	code, out, errOut := runCLI(t, "render", "--offline", "--app", appFile, "--repositories", reposFile, "--kube-version", "1.29.3")
	if code != 0 {
		t.Fatalf("render: %d %s", code, errOut)
	}
	objs, err := resource.Decode("render", []byte(out), resource.DefaultDecodeOptions())
	if err != nil || len(objs) != 1 {
		t.Fatalf("render output: %d objects, %v", len(objs), err)
	}
	live := objs[0].DeepCopy()
	live.SetNamespace("ci")
	liveDir := t.TempDir()
	write := func(name string, o *unstructured.Unstructured) {
		data, _ := yaml.Marshal(o.Object)
		if err := os.WriteFile(filepath.Join(liveDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("caps.yaml", live)
	args := []string{"diff", "--app", appFile, "--repositories", reposFile, "--kube-version", "1.29.3", "--live-dir", liveDir}
	if code, out, errOut := runCLI(t, args...); code != 0 || out != "" {
		t.Fatalf("diff against an identical live state: exit %d\n%s\n%s", code, out, errOut)
	}
	changed := live.DeepCopy()
	_ = unstructured.SetNestedField(changed.Object, "v1.28.0", "data", "kube")
	write("caps.yaml", changed)
	stale := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "old", "namespace": "ci"}}}
	if err := resource.DefaultTracking().Set(stale, "caps"); err != nil {
		t.Fatal(err)
	}
	write("old.yaml", stale)
	code, out, errOut = runCLI(t, args...)
	if code != 1 {
		t.Fatalf("diff against a changed live state: exit %d\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "diff output", out, "===== ConfigMap ci/caps", "v1.28.0", "v1.29.3", "===== ConfigMap ci/old: live only")
}

// render against the cluster keeps fetching chart dependencies through the
// engine, although it wraps the Helm renderer to record its output.
func TestRenderFetchesChartDependencies(t *testing.T) {
	r := chartserver.New(t, chartserver.Options{})
	r.Add(chartserver.Chart(t, "sub", "0.1.0", map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-sub}\n",
	}))
	r.Add(chartserver.Chart(t, "umbrella", "1.0.0", map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n- name: sub\n  version: 0.1.x\n  repository: " + r.URL + "\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-umbrella}\n",
	}))
	appFile := filepath.Join(t.TempDir(), "app.yaml")
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: umbrella}
spec:
  source: {repoURL: "` + r.URL + `", chart: umbrella, targetRevision: 1.0.0}
  destination: {server: https://kubernetes.default.svc, namespace: ` + cluster.TestNamespace(t) + `}
`
	if err := os.WriteFile(appFile, []byte(app), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "render", "--app", appFile, "--kubeconfig", cluster.Kubeconfig())
	if code != 0 {
		t.Fatalf("render: exit %d\n%s", code, errOut)
	}
	mustContain(t, "render output", out, "name: from-umbrella", "name: from-sub")
}
