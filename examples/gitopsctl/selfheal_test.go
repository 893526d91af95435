package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSelfHealIsVisible: the agent's self-heal of a drift is printed as a
// self-heal (not the SyncStarted line of a new commit), a self-heal that
// waits for its backoff is announced with when it is due, and status
// during the backoff says which self-heal comes and when, beside the last
// operation that names the self-heal it was.
func TestSelfHealIsVisible(t *testing.T) {
	ns := cluster.TestNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  color: blue\n"
	git, commit := testfiles.GitRepo(t, gitserver.DefaultOptions(), "app", fstest.MapFS{"deploy/cm.yaml": {Data: []byte(cm)}})
	appFile := filepath.Join(t.TempDir(), "flags.yaml")
	app := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: flags
spec:
  source: {repoURL: %s, targetRevision: main, path: deploy}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy: {automated: {prune: true, selfHeal: true}}
`, git.RepoURL("app"), ns)
	if err := os.WriteFile(appFile, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	agentCtx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(agentCtx, []string{"agent", "--apps", appFile, "--kubeconfig", cluster.Kubeconfig(), "--interval", "10m"}, &stdout, &stderr)
	}()
	defer func() {
		stopAgent()
		<-done
	}()
	cs := clientset(t)
	color := func() string {
		c, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "flags", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return c.Data["color"]
	}
	drift := func() {
		t.Helper()
		c, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "flags", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.Data["color"] = "red"
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, c, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	printed := func(what string) {
		t.Helper()
		if err := waitUntil(ctx, time.Minute, func() (bool, error) { return strings.Contains(stdout.String(), what) && color() == "blue", nil }); err != nil {
			t.Fatalf("waiting for %q and the ConfigMap healed: %v\nstdout:\n%s\nstderr:\n%s", what, err, stdout.String(), stderr.String())
		}
	}
	short := commit[:7]
	printed("SyncSucceeded  flags @ " + short)
	mustContain(t, "agent output", stdout.String(), "SyncStarted    flags @ "+short+": Initiated automated sync to '"+short+"'\n")
	drift()
	printed("(self-heal attempt 1: the live state drifted from the revision already synced)")
	// Self-heal 2 comes 6 s (2 s times 3) after self-heal 1 began, and is
	// announced before it runs.
	drift()
	printed("(self-heal attempt 2: the live state drifted")
	mustContain(t, "agent output", stdout.String(), "SelfHealBackoff flags @ "+short+": self-heal attempt 2 due at ")
	// Self-heal 3 waits 18 s: status says so meanwhile.
	drift()
	if err := waitUntil(ctx, time.Minute, func() (bool, error) { return strings.Contains(stdout.String(), "self-heal attempt 3 due at"), nil }); err != nil {
		t.Fatalf("self-heal 3's backoff not announced: %v\n%s", err, stdout.String())
	}
	code, out, errOut := runCLI(t, "status", "--app", appFile, "--kubeconfig", cluster.Kubeconfig())
	if code != 0 {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "status in the self-heal backoff", out, "Sync:      OutOfSync",
		"Last operation: Succeeded (automated sync of "+commit+", self-heal attempt 2 of a drift, started ",
		"Self-heal: attempt 3 due at ", "self-heal backoff): the live state drifted from "+short)
	printed("(self-heal attempt 3: the live state drifted")
}
