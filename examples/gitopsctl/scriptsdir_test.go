package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestScriptsDir proves --scripts-dir reaches the commands that judge
// health and the action commands: a library in Argo CD's layout with a
// health.lua and an actions folder for apps/Deployment replaces the
// built-in ones.
func TestScriptsDir(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, _ := appFixture(t, ns)
	kc := []string{"--kubeconfig", cluster.Kubeconfig()}
	lib := t.TempDir()
	files := map[string]string{
		"apps/Deployment/health.lua":                  `return {status = "Degraded", message = "judged by the library"}`,
		"apps/Deployment/actions/discovery.lua":       `return {["annotate"] = {}}`,
		"apps/Deployment/actions/annotate/action.lua": `obj.metadata.annotations = obj.metadata.annotations or {} obj.metadata.annotations["touched"] = "yes" return obj`,
		"apps/Deployment/health_test.yaml":            "tests: []\n",
	}
	for name, data := range files {
		p := filepath.Join(lib, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errOut := runCLI(t, append([]string{"sync", "--scripts-dir", lib, "--app", appFile}, kc...)...); code != 0 && code != 1 {
		t.Fatalf("sync: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, append([]string{"status", "--scripts-dir", lib, "--app", appFile}, kc...)...)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	mustContain(t, "status with --scripts-dir", out, "Health:    Degraded", "judged by the library")
	code, out, errOut = runCLI(t, append([]string{"action", "list", "--scripts-dir", lib, "--app", appFile, "apps/Deployment/web"}, kc...)...)
	if code != 0 {
		t.Fatalf("action list: exit %d\n%s", code, errOut)
	}
	mustContain(t, "action list with --scripts-dir", out, "annotate")
	if code, _, errOut := runCLI(t, append([]string{"action", "run", "--scripts-dir", lib, "--app", appFile, "apps/Deployment/web", "restart"}, kc...)...); code != 1 {
		t.Fatalf("a built-in action the library replaced: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := runCLI(t, append([]string{"action", "run", "--scripts-dir", lib, "--app", appFile, "apps/Deployment/web", "annotate"}, kc...)...); code != 0 {
		t.Fatalf("library action: exit %d\n%s\n%s", code, out, errOut)
	}
	// A broken library is refused, naming the flag.
	if err := os.WriteFile(filepath.Join(lib, "apps", "Deployment", "health.lua"), []byte("return {"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, append([]string{"status", "--scripts-dir", lib, "--app", appFile}, kc...)...)
	if code != 2 {
		t.Fatalf("broken library: exit %d, want 2\n%s", code, errOut)
	}
	mustContain(t, "broken library error", errOut, "--scripts-dir", "apps/Deployment")
}

// TestArgoCDConfigMapFlag proves --argocd-cm applies a settings file:
// its health script judges, its unused keys are warned about, and a value
// the engine cannot honour is refused naming the key.
func TestArgoCDConfigMapFlag(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, _ := appFixture(t, ns)
	kc := []string{"--kubeconfig", cluster.Kubeconfig()}
	cm := filepath.Join(t.TempDir(), "argocd-cm.yaml")
	write := func(data string) {
		t.Helper()
		if err := os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n"+data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("  url: https://argocd.example.com\n  resource.customizations.health.apps_Deployment: |\n    return {status = \"Suspended\", message = \"from argocd-cm\"}\n")
	// Synced without the settings: a Suspended Deployment would hold the
	// sync's health wait.
	if code, out, errOut := runCLI(t, append([]string{"sync", "--app", appFile}, kc...)...); code != 0 {
		t.Fatalf("sync: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, append([]string{"status", "--argocd-cm", cm, "--app", appFile}, kc...)...)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	mustContain(t, "status with --argocd-cm", out, "Suspended", "from argocd-cm")
	mustContain(t, "warnings", errOut, "warning: argocd-cm url: a setting of Argo CD's API server, not used by this program")
	write("  resource.customizations.ignoreResourceUpdates.apps_Deployment: \"jsonPointer: [/status]\"\n")
	code, _, errOut = runCLI(t, append([]string{"status", "--argocd-cm", cm, "--app", appFile}, kc...)...)
	if code != 2 {
		t.Fatalf("malformed setting: exit %d, want 2\n%s", code, errOut)
	}
	mustContain(t, "malformed setting error", errOut, "resource.customizations.ignoreResourceUpdates.apps_Deployment", "malformed value")
}
