package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAgentWebhook runs the agent on an automated app served by a real Git
// server: it deploys it, a signed push webhook makes it roll out a new
// commit at once (the interval is ten minutes), an unsigned one is refused,
// and Ctrl-C (cancelling the context) stops it cleanly.
func TestAgentWebhook(t *testing.T) {
	ns := cluster.TestNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	git := testfiles.GitServer(t, gitserver.DefaultOptions())
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  color: blue\n"
	if _, err := git.CreateRepository(ctx, "app", fstest.MapFS{"deploy/cm.yaml": {Data: []byte(cm)}}); err != nil {
		t.Fatal(err)
	}
	appsDir := t.TempDir()
	app := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: flags
spec:
  source: {repoURL: %s, targetRevision: main, path: deploy}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy: {automated: {prune: true, selfHeal: true}}
`, git.RepoURL("app"), ns)
	if err := os.WriteFile(filepath.Join(appsDir, "flags.yaml"), []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(appsDir, "notes.txt"), []byte("not an app"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITOPS_WEBHOOK_SECRET", "s3cret")

	agentCtx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(agentCtx, []string{"agent", "--apps", appsDir, "--kubeconfig", cluster.Kubeconfig(),
			"--interval", "10m", "--webhook-addr", "127.0.0.1:0"}, &stdout, &stderr)
	}()

	cs := clientset(t)
	color := func() string {
		c, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "flags", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return c.Data["color"]
	}
	if err := waitUntil(ctx, time.Minute, func() (bool, error) { return color() == "blue", nil }); err != nil {
		t.Fatalf("first sync: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	hookURL := regexp.MustCompile(`webhook listening on (\S+)`).FindStringSubmatch(stdout.String())
	if hookURL == nil {
		t.Fatalf("no webhook address printed:\n%s", stdout.String())
	}

	commit, err := git.Commit(ctx, "app", "green", map[string][]byte{"deploy/cm.yaml": []byte(strings.Replace(cm, "blue", "green", 1))})
	if err != nil {
		t.Fatal(err)
	}
	payload := fmt.Sprintf(`{"ref":"refs/heads/main","after":%q,"repository":{"clone_url":%q},"commits":[{"modified":["deploy/cm.yaml"]}]}`, commit, git.RepoURL("app"))
	if code := postHook(t, hookURL[1], payload, "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("badly signed webhook: status %d, want 401", code)
	}
	if code := postHook(t, hookURL[1], payload, "s3cret"); code != http.StatusOK {
		t.Fatalf("signed webhook: status %d, want 200", code)
	}
	// The ConfigMap turns green while the sync runs, before its
	// SyncSucceeded line: wait for both.
	if err := waitUntil(ctx, time.Minute, func() (bool, error) {
		return color() == "green" && strings.Contains(stdout.String(), "SyncSucceeded  flags @ "+commit[:7]), nil
	}); err != nil {
		t.Fatalf("the pushed commit was not rolled out: %v\nstdout:\n%s", err, stdout.String())
	}
	mustContain(t, "agent output", stdout.String(), "managing 1 application(s): flags", "SyncSucceeded  flags @ "+commit[:7], "webhook: push to")

	stopAgent()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("agent exit %d after Ctrl-C\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("agent did not stop within 30 s of Ctrl-C")
	}
	mustContain(t, "agent output", stdout.String(), "stopped")
}

func postHook(t *testing.T, url, payload, secret string) int {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(payload))
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
