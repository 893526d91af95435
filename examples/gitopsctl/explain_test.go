package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const generatedHook = `apiVersion: batch/v1
kind: Job
metadata:
  generateName: migrate-
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: example.com/migrate:1}]
`

// TestCLIExplainsAFailedSync: a failed sync prints a row per object with
// its message; status, run afterwards as another process would (a new
// engine, the same state namespace), shows that operation and its rows;
// a hook created from a generateName is listed by its generated name.
func TestCLIExplainsAFailedSync(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, repo := appFixture(t, ns)
	if err := os.WriteFile(filepath.Join(repo, "hook.yaml"), []byte(generatedHook), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--app", appFile, "--kubeconfig", cluster.Kubeconfig(), "--state-namespace", ns}

	code, out, errOut := runCLI(t, append([]string{"sync"}, flags...)...)
	if code != 0 {
		t.Fatalf("first sync: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, append([]string{"status"}, flags...)...)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	if !regexp.MustCompile(`batch/Job ` + ns + `/migrate-[a-z0-9]+-presync-[0-9]+ +Synced`).MatchString(out) {
		t.Errorf("status does not list the hook by its generated name:\n%s", out)
	}
	mustContain(t, "status after a good sync", out, "Last operation: Succeeded (manual sync of ")

	if err := os.WriteFile(filepath.Join(repo, "bad.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Name}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, append([]string{"sync"}, flags...)...)
	if code != 1 {
		t.Fatalf("sync of a bad object: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "failed sync output", out, "Result: Failed", "WAVE", "RESOURCE", "MESSAGE", "ConfigMap "+ns+"/Not_A_Name", "metadata.name: Invalid value")

	code, out, errOut = runCLI(t, append([]string{"status"}, flags...)...)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	mustContain(t, "status after a failed sync", out, "Last operation: Failed (manual sync of ", "ConfigMap "+ns+"/Not_A_Name", "metadata.name: Invalid value")
	if strings.Count(out, "Last operation:") != 1 {
		t.Errorf("status shows more than one operation:\n%s", out)
	}
}
