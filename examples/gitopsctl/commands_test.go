package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRenderDiffSyncStatus walks one application through the commands as a
// user would: render, diff (out of sync: exit 1), a dry run that writes
// nothing, sync with its progress table, diff (in sync: exit 0), status.
func TestRenderDiffSyncStatus(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, _ := appFixture(t, ns)
	kc := []string{"--kubeconfig", cluster.Kubeconfig()}
	cs := clientset(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	code, out, errOut := runCLI(t, append([]string{"render", "--app", appFile}, kc...)...)
	if code != 0 {
		t.Fatalf("render: exit %d\n%s", code, errOut)
	}
	mustContain(t, "render output", out, "kind: ConfigMap", "name: settings", "kind: Deployment", "name: web", "kind: Secret")
	if strings.Contains(out, "c3VwZXItc2VjcmV0LWdpdA") || !strings.Contains(out, "password: ++++++++") {
		t.Errorf("render did not mask the Secret:\n%s", out)
	}
	if code, out, _ := runCLI(t, append([]string{"render", "--show-secrets", "--app", appFile}, kc...)...); code != 0 || !strings.Contains(out, "c3VwZXItc2VjcmV0LWdpdA") {
		t.Errorf("render --show-secrets: exit %d, value not shown:\n%s", code, out)
	}
	if n := strings.Count(out, "---\n"); n != 3 {
		t.Errorf("render printed %d documents, want 3:\n%s", n, out)
	}

	code, out, errOut = runCLI(t, append([]string{"diff", "--app", appFile}, kc...)...)
	if code != 1 {
		t.Fatalf("diff before sync: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "diff output", out, "===== ConfigMap "+ns+"/settings", "===== apps/Deployment "+ns+"/web", "greeting")
	if strings.Contains(out, "super-secret-git") || strings.Contains(out, "c3VwZXItc2VjcmV0LWdpdA") {
		t.Fatalf("diff shows the Secret's value:\n%s", out)
	}

	code, out, errOut = runCLI(t, append([]string{"sync", "--dry-run", "--app", appFile}, kc...)...)
	if code != 0 {
		t.Fatalf("sync --dry-run: exit %d\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "dry-run output", out, "Result: Succeeded", "dry run", "3 created")
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("dry run created the ConfigMap (get: %v)", err)
	}

	// --health: sync waits for the operation only, as argocd app sync
	// does; this test asks for the health of the last wave too.
	code, out, errOut = runCLI(t, append([]string{"sync", "--health", "--app", appFile}, kc...)...)
	if code != 0 {
		t.Fatalf("sync: exit %d\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "sync output", out, "WAVE", "RESOURCE", "ACTION", "HEALTH",
		"Sync 0", "ConfigMap "+ns+"/settings", "Sync 1", "apps/Deployment "+ns+"/web", "created", "Result: Succeeded", "Health:    Healthy")
	if !regexp.MustCompile(`Sync 1\s+apps/Deployment ` + ns + `/web\s+created\s+Succeeded\s+Healthy`).MatchString(out) {
		t.Errorf("no progress row says the Deployment was created and is Healthy:\n%s", out)
	}
	// Wave 0 is printed before wave 1: the table follows the waves.
	if strings.Index(out, "ConfigMap "+ns+"/settings") > strings.Index(out, "apps/Deployment "+ns+"/web") {
		t.Errorf("wave 1 printed before wave 0:\n%s", out)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "hello" {
		t.Fatalf("ConfigMap after sync: %v %v", cm.Data, err)
	}

	code, out, errOut = runCLI(t, append([]string{"diff", "--app", appFile}, kc...)...)
	if code != 0 || out != "" {
		t.Fatalf("diff after sync: exit %d, want 0 and no output\n%s\n%s", code, out, errOut)
	}

	code, out, errOut = runCLI(t, append([]string{"status", "--app", appFile}, kc...)...)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	mustContain(t, "status output", out, "Name:      fixture", "Sync:      Synced", "Health:    Healthy", "Revision:",
		"ConfigMap "+ns+"/settings", "Secret "+ns+"/credentials", "apps/Deployment "+ns+"/web")

	code, out, _ = runCLI(t, append([]string{"status", "-o", "json", "--app", appFile}, kc...)...)
	if code != 0 || !strings.Contains(out, `"sync": "Synced"`) {
		t.Fatalf("status -o json: exit %d\n%s", code, out)
	}
}

// TestDriftAndPrune changes a live object and removes a file from Git:
// diff shows both (exit 1) with the Secret masked, sync without --prune
// leaves the extra object, sync --prune deletes it.
func TestDriftAndPrune(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, repo := appFixture(t, ns)
	kc := []string{"--kubeconfig", cluster.Kubeconfig()}
	if code, out, errOut := runCLI(t, append([]string{"sync", "--app", appFile}, kc...)...); code != 0 {
		t.Fatalf("first sync: exit %d\n%s\n%s", code, out, errOut)
	}
	cs := clientset(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, "credentials", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data["password"] = []byte("changed-by-hand-value")
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{FieldManager: "intruder"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(repo, "configmap.yaml")); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runCLI(t, append([]string{"diff", "--app", appFile}, kc...)...)
	if code != 1 {
		t.Fatalf("diff: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "diff output", out, "===== Secret "+ns+"/credentials", "===== ConfigMap "+ns+"/settings: live only")
	for _, secret := range []string{"changed-by-hand-value", "super-secret-git", "Y2hhbmdlZC1ieS1oYW5k", "c3VwZXItc2VjcmV0"} {
		if strings.Contains(out, secret) {
			t.Fatalf("diff shows secret data %q:\n%s", secret, out)
		}
	}

	if code, out, errOut := runCLI(t, append([]string{"sync", "--app", appFile}, kc...)...); code != 0 {
		t.Fatalf("sync without prune: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{}); err != nil {
		t.Fatalf("sync without --prune deleted the ConfigMap: %v", err)
	}
	code, out, _ = runCLI(t, append([]string{"status", "--app", appFile}, kc...)...)
	if code != 0 {
		t.Fatalf("status: exit %d", code)
	}
	mustContain(t, "status output", out, "Sync:      OutOfSync", "requires pruning")

	code, out, errOut = runCLI(t, append([]string{"sync", "--prune", "--app", appFile}, kc...)...)
	if code != 0 {
		t.Fatalf("sync --prune: exit %d\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "sync --prune output", out, "pruned", "Sync:      Synced")
	err = waitUntil(ctx, 30*time.Second, func() (bool, error) {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("ConfigMap not pruned: %v", err)
	}
	s2, err := cs.CoreV1().Secrets(ns).Get(ctx, "credentials", metav1.GetOptions{})
	if err != nil || string(s2.Data["password"]) != "super-secret-git" {
		t.Fatalf("Secret not restored: %v", err)
	}
}

// TestExitCodesOnBadInput: a failing sync exits 1; a bad Application file,
// a missing source and bad flags exit 2 with a message naming the problem.
func TestExitCodesOnBadInput(t *testing.T) {
	ns := cluster.TestNamespace(t)
	kc := []string{"--kubeconfig", cluster.Kubeconfig()}

	code, _, errOut := runCLI(t, append([]string{"diff", "--app", "testdata/bad-app.yaml"}, kc...)...)
	if code != 2 {
		t.Fatalf("diff of a misspelt Application: exit %d, want 2", code)
	}
	mustContain(t, "error", errOut, "testdata/bad-app.yaml", "line 9", "targetRevison", "unknown field")

	appFile, repo := appFixture(t, ns)
	if err := os.RemoveAll(repo); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"diff", "status", "sync", "render"} {
		code, _, errOut = runCLI(t, append([]string{cmd, "--app", appFile}, kc...)...)
		if code != 2 {
			t.Errorf("%s of a missing source folder: exit %d, want 2\n%s", cmd, code, errOut)
		}
		if !strings.Contains(errOut, "fixture") && !strings.Contains(errOut, repo) {
			t.Errorf("%s error names neither the app nor the folder: %s", cmd, errOut)
		}
	}

	// A second source that cannot be read: render must not print the first
	// source's objects as if they were the whole app.
	_, goodRepo := appFixture(t, ns)
	multi := filepath.Join(t.TempDir(), "multi.yaml")
	multiApp := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: multi\nspec:\n  sources:\n" +
		"    - {repoURL: " + goodRepo + ", path: .}\n    - {repoURL: " + goodRepo + "-missing, path: .}\n" +
		"  destination: {server: https://kubernetes.default.svc, namespace: " + ns + "}\n"
	if err := os.WriteFile(multi, []byte(multiApp), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, append([]string{"render", "--app", multi}, kc...)...); code != 2 || out != "" || !strings.Contains(errOut, goodRepo+"-missing") {
		t.Errorf("render with an unreadable second source: exit %d, want 2 and no output\n%s\n%s", code, out, errOut)
	}

	// The API server refuses the object: the sync fails (exit 1) and says why.
	appFile, repo = appFixture(t, ns)
	bad := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\ndata:\n  a: b\n"
	if err := os.WriteFile(filepath.Join(repo, "bad.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, append([]string{"sync", "--app", appFile}, kc...)...)
	if code != 1 {
		t.Fatalf("sync of an invalid object: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "sync output", out+errOut, "Not_A_Valid_Name")

	for _, args := range [][]string{{"diff"}, {"sync", "--app"}, {"status", "--app", appFile, "extra"}, {"status", "-o", "xml", "--app", appFile}, {"nope"}} {
		if code, _, _ := runCLI(t, append(args, kc...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
