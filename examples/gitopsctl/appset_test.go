package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/internal/forgetest"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAppSetGenerateOffline: a matrix of git directories (from a local
// folder standing for the repository) and cluster Secrets prints the
// Applications sorted, as YAML that LoadApplications accepts; a set whose
// template yields an invalid Application fails with exit 2, naming the set
// and generator, and prints nothing.
func TestAppSetGenerateOffline(t *testing.T) {
	repo := writeFiles(t, map[string]string{
		"apps/web/cm.yaml": "{}\n", "apps/api/cm.yaml": "{}\n", "apps/old/cm.yaml": "{}\n",
	})
	dir := writeFiles(t, map[string]string{
		"set.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: fleet, namespace: argocd}
spec:
  generators:
  - matrix:
      generators:
      - git:
          repoURL: https://git.example.com/org/deploy.git
          revision: main
          directories: [{path: apps/*}, {path: apps/old, exclude: true}]
      - clusters: {selector: {matchLabels: {env: prod}}}
  template:
    metadata: {name: '{{path.basename}}-{{name}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/org/deploy.git, targetRevision: main, path: '{{path}}'}
      destination: {server: '{{server}}', namespace: '{{path.basename}}'}
`,
		"bad.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: broken}
spec:
  generators: [{list: {elements: [{app: a}]}}]
  template:
    metadata: {name: '{{app}}'}
    spec: {destination: {server: x}, bogus: 1}
`,
		"clusters.yaml": `apiVersion: v1
kind: Secret
metadata: {name: kr, labels: {argocd.argoproj.io/secret-type: cluster, env: prod}}
stringData: {name: prod-kr, server: "https://kr.example.com", config: "{\"bearerToken\": \"s3cr3t\"}"}
---
apiVersion: v1
kind: Secret
metadata: {name: us, labels: {argocd.argoproj.io/secret-type: cluster, env: prod}}
stringData: {name: prod-us, server: "https://us.example.com"}
---
apiVersion: v1
kind: Secret
metadata: {name: dev, labels: {argocd.argoproj.io/secret-type: cluster, env: dev}}
stringData: {name: dev, server: "https://dev.example.com"}
`,
	})
	code, out, errOut := runCLI(t, "appset", "generate", "--appset", filepath.Join(dir, "set.yaml"),
		"--clusters", filepath.Join(dir, "clusters.yaml"), "--repo-dir", "https://git.example.com/org/deploy.git="+repo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	apps, err := gitops.LoadApplications(strings.NewReader(out))
	if err != nil {
		t.Fatalf("output does not load: %v\n%s", err, out)
	}
	var got []string
	for _, a := range apps {
		got = append(got, a.Name+"@"+a.Spec.Destination.Server)
	}
	want := "api-prod-kr@https://kr.example.com api-prod-us@https://us.example.com web-prod-kr@https://kr.example.com web-prod-us@https://us.example.com"
	if strings.Join(got, " ") != want {
		t.Fatalf("got %v\nwant %s", got, want)
	}
	if strings.Contains(out, "s3cr3t") {
		t.Fatal("a cluster credential reached the output")
	}

	code, out, errOut = runCLI(t, "appset", "generate", "--appset", filepath.Join(dir, "bad.yaml"))
	if code != 2 || out != "" || !strings.Contains(errOut, `applicationset "broken": generators[0] (list): application "a"`) ||
		!strings.Contains(errOut, "spec.bogus: unknown field") {
		t.Fatalf("bad set: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if code, _, errOut = runCLI(t, "appset", "generate", "--appset", filepath.Join(dir, "set.yaml"), "--clusters", filepath.Join(dir, "clusters.yaml")); code != 2 ||
		!strings.Contains(errOut, "no folder given for repository https://git.example.com/org/deploy.git") {
		t.Fatalf("missing --repo-dir: exit %d, %s", code, errOut)
	}
}

// TestAppSetGenerateForges: `appset generate` runs scmProvider,
// pullRequest and plugin generators against their forge and plugin, with
// the token Secrets and plugin ConfigMap of --objects: an organisation of
// three repositories (one filtered out) prints two Applications, each
// open pull request one preview, the plugin its parameter sets; the
// tokens never reach the output; --offline refuses them and exits 2.
func TestAppSetGenerateForges(t *testing.T) {
	f := forgetest.New()
	f.Token = "ghp_forge-token"
	for _, r := range []forgetest.Repo{
		{Org: "myorg", Name: "svc-a", DefaultBranch: "main", Branches: map[string]string{"main": "aaaa1111"}},
		{Org: "myorg", Name: "svc-b", DefaultBranch: "main", Branches: map[string]string{"main": "bbbb2222"}},
		{Org: "myorg", Name: "docs", DefaultBranch: "main", Branches: map[string]string{"main": "dddd4444"}},
	} {
		f.AddRepo(r)
	}
	f.OpenPR(forgetest.PR{Org: "myorg", Repo: "svc-a", Number: 12, Title: "feat", Branch: "feat", Target: "main", SHA: "1234567890", Author: "ann"})
	api := f.GitHub(t)
	plugin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer plugin-token" || r.URL.Path != "/api/v1/getparams.execute" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, `{"output":{"parameters":[{"name":"from-plugin"}]}}`)
	}))
	t.Cleanup(plugin.Close)
	dir := writeFiles(t, map[string]string{
		"sets.yaml": fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: repos, namespace: argocd}
spec:
  generators:
  - scmProvider:
      cloneProtocol: https
      github: {organization: myorg, api: '%[1]s/', tokenRef: {secretName: github-token, key: token}}
      filters: [{repositoryMatch: ^svc}]
  template:
    metadata: {name: '{{repository}}'}
    spec: {project: default, source: {repoURL: '{{url}}', targetRevision: '{{sha}}', path: deploy}, destination: {server: https://kubernetes.default.svc, namespace: '{{repository}}'}}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: previews, namespace: argocd}
spec:
  generators:
  - pullRequest:
      github: {owner: myorg, repo: svc-a, api: '%[1]s/', tokenRef: {secretName: github-token, key: token}}
  - plugin:
      configMapRef: {name: my-plugin}
      template:
        metadata: {name: 'plugin-{{name}}'}
  template:
    metadata: {name: 'preview-{{number}}'}
    spec: {project: default, source: {repoURL: https://github.test/myorg/svc-a.git, targetRevision: '{{head_sha}}', path: deploy}, destination: {server: https://kubernetes.default.svc, namespace: previews}}
`, api),
		"objects.yaml": fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: github-token}
stringData: {token: ghp_forge-token}
---
apiVersion: v1
kind: Secret
metadata: {name: argocd-secret}
stringData: {plugin.token: plugin-token}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: my-plugin}
data: {baseUrl: '%s', token: $plugin.token}
`, plugin.URL),
	})
	code, out, errOut := runCLI(t, "appset", "generate", "--appset", filepath.Join(dir, "sets.yaml"), "--objects", filepath.Join(dir, "objects.yaml"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	apps, err := gitops.LoadApplications(strings.NewReader(out))
	if err != nil {
		t.Fatalf("output does not load: %v\n%s", err, out)
	}
	var got []string
	for _, a := range apps {
		got = append(got, a.Name)
	}
	if strings.Join(got, " ") != "plugin-from-plugin preview-12 svc-a svc-b" {
		t.Fatalf("apps = %v", got)
	}
	if strings.Contains(out, "ghp_forge-token") || strings.Contains(out, "plugin-token") {
		t.Fatal("a token reached the output")
	}
	code, out, errOut = runCLI(t, "appset", "generate", "--appset", filepath.Join(dir, "sets.yaml"), "--objects", filepath.Join(dir, "objects.yaml"), "--offline")
	if code != 2 || out != "" || !strings.Contains(errOut, "scm providers are disabled") || !strings.Contains(errOut, "no provider") {
		t.Fatalf("--offline: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
}
