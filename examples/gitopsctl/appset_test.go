package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops"
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
