package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A custom Lua health check that fails (argocd-cm
// resource.customizations.health.<group>_<Kind> raising an error) is
// reported by gitopsctl sync once per line, the resource table printed
// once, and the custom resource's row in the final table says the
// check's failure, never Running.
func TestSyncLuaHealthFailureOutput(t *testing.T) {
	ns := cluster.TestNamespace(t)
	group := ns + ".lua.example.com"
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.` + group + `}
spec:
  group: ` + group + `
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`,
		"widget.yaml": "apiVersion: " + group + "/v1\nkind: Widget\nmetadata: {name: gear}\nspec: {size: 3}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	appFile, cmFile := filepath.Join(dir, "app.yaml"), filepath.Join(dir, "argocd-cm.yaml")
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: widgets}\nspec:\n  source: {repoURL: " + repo +
		", path: .}\n  destination: {server: https://kubernetes.default.svc, namespace: " + ns + "}\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n  resource.customizations.health." + group + "_Widget: |\n    error(\"widget probe exploded\")\n"
	for f, body := range map[string]string{appFile: app, cmFile: cm} {
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, out, errOut := runCLI(t, "sync", "--app", appFile, "--kubeconfig", cluster.Kubeconfig(), "--state-namespace", ns, "--argocd-cm", cmFile)
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	key := group + "/Widget " + ns + "/gear"
	for _, line := range strings.Split(out+errOut, "\n") {
		if n := strings.Count(line, key); n > 1 {
			t.Errorf("the Widget named %d times on one line: %q", n, line)
		}
	}
	if n := strings.Count(out, "WAVE"); n != 1 {
		t.Errorf("%d resource tables, want 1:\n%s", n, out)
	}
	_, final, _ := strings.Cut(out, "Result:")
	if strings.Contains(final, "Running") {
		t.Errorf("the final result leaves a row Running:\n%s", final)
	}
	if !strings.Contains(final, key+" Failed: health check failed: ") || !strings.Contains(final, "widget probe exploded") {
		t.Errorf("the Lua failure is not reported:\n%s\n%s", out, errOut)
	}
}
