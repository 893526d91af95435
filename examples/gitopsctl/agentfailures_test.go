package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAgentManagesTheValidAppsAndReportsFailures runs the agent on a
// folder holding a good automated app, a file that does not decode and an
// app whose source folder does not exist: the good app is deployed, the
// bad file is reported with its file, line and field, the app that cannot
// render gets one line naming its condition, and one more line when the
// folder appears and the condition clears.
func TestAgentManagesTheValidAppsAndReportsFailures(t *testing.T) {
	ns, brokenNS := cluster.TestNamespace(t), cluster.TestNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, repo := appFixture(t, ns)
	missing := filepath.Join(t.TempDir(), "later")
	appsDir := t.TempDir()
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
spec:
  source: {repoURL: %s, path: .}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy: {automated: {prune: true}}
`
	if err := os.WriteFile(filepath.Join(appsDir, "good.yaml"), []byte(fmt.Sprintf(app, "good", repo, ns)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(appsDir, "broken.yaml"), []byte(fmt.Sprintf(app, "broken", missing, brokenNS)), 0o644); err != nil {
		t.Fatal(err)
	}
	bad, err := os.ReadFile("testdata/bad-app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(appsDir, "bad.yaml"), bad, 0o644); err != nil {
		t.Fatal(err)
	}

	agentCtx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(agentCtx, []string{"agent", "--apps", appsDir, "--kubeconfig", cluster.Kubeconfig(),
			"--state-namespace", ns, "--interval", "10m"}, &stdout, &stderr)
	}()
	cs := clientset(t)
	err = waitUntil(ctx, time.Minute, func() (bool, error) {
		select {
		case code := <-done:
			return false, fmt.Errorf("agent exited %d", code)
		default:
		}
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the good app was not deployed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	mustContain(t, "agent stderr", stderr.String(), filepath.Join(appsDir, "bad.yaml"), "line 9", "targetRevison")
	mustContain(t, "agent stdout", stdout.String(), "managing 2 application(s)", "1 file not loaded")

	raised := "broken: ComparisonError: "
	if err := waitUntil(ctx, time.Minute, func() (bool, error) { return strings.Contains(stdout.String(), raised), nil }); err != nil {
		t.Fatalf("no line for the app that cannot render: %v\nstdout:\n%s", err, stdout.String())
	}
	if err := os.CopyFS(missing, os.DirFS("testdata/app")); err != nil {
		t.Fatal(err)
	}
	cleared := "broken: ComparisonError cleared"
	if err := waitUntil(ctx, time.Minute, func() (bool, error) { return strings.Contains(stdout.String(), cleared), nil }); err != nil {
		t.Fatalf("no line when the failure cleared: %v\nstdout:\n%s", err, stdout.String())
	}
	out := stdout.String()
	t.Logf("agent output:\n%s\nstderr:\n%s", out, stderr.String())
	if n := strings.Count(out, raised); n != 1 {
		t.Errorf("the failure was printed %d times, want once:\n%s", n, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, raised) && strings.Count(line, missing) > 2 {
			t.Errorf("the failure names the folder %d times:\n%s", strings.Count(line, missing), line)
		}
	}
	if n := strings.Count(out, missing+": no such file"); n != 1 {
		t.Errorf("the failure's message was printed %d times, want once (the health change it explains need not repeat it):\n%s", n, out)
	}
	if n := strings.Count(out, cleared); n != 1 {
		t.Errorf("the recovery was printed %d times, want once:\n%s", n, out)
	}

	stopAgent()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("agent exit %d after Ctrl-C\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("agent did not stop within 30 s of Ctrl-C")
	}
}
