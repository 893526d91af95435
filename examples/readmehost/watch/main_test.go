package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/testenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}

// TestWatchSyncsPrintsAndStops runs the controller on the local cluster over
// a folder holding one automated app: it must print the app's way to Synced
// and Healthy and the sync's notifications, have the objects applied, and,
// once its context ends (what SIGINT does in main), print "stopped" and
// return nil.
func TestWatchSyncsPrintsAndStops(t *testing.T) {
	ns := cluster.TestNamespace(t)
	repo, err := filepath.Abs("../cistep/testdata/repo")
	if err != nil {
		t.Fatal(err)
	}
	apps := t.TempDir()
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
spec:
  project: default
  source:
    repoURL: ` + repo + `
    path: guestbook
  destination:
    server: https://kubernetes.default.svc
    namespace: ` + ns + `
  syncPolicy:
    automated: {prune: true, selfHeal: true}
`
	if err := os.WriteFile(filepath.Join(apps, "guestbook.yaml"), []byte(app), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(apps, "README.md"), []byte("not an app"), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	lines := make(chan string, 4096)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--apps", apps, "--kubeconfig", cluster.Kubeconfig()}, pw, &stderr)
		pw.Close()
	}()

	var seen []string
	waitFor := func(want string) { // reads lines until one, seen before or now, holds want
		t.Helper()
		for _, line := range seen {
			if strings.Contains(line, want) {
				return
			}
		}
		for line := range lines {
			seen = append(seen, line)
			if strings.Contains(line, want) {
				return
			}
		}
		t.Fatalf("output ended without %q; stderr %q; output:\n%s", want, stderr.String(), strings.Join(seen, "\n"))
	}
	waitFor("watching 1 apps of " + apps)
	waitFor("status argocd/guestbook OutOfSync Missing at sha256:")
	waitFor("notification argocd/guestbook SyncStarted")
	waitFor("status argocd/guestbook Synced Healthy at sha256:")
	waitFor("notification argocd/guestbook SyncSucceeded") // may come after the status: the sync ends after its refresh

	client, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	dep, err := client.AppsV1().Deployments(ns).Get(ctx, "guestbook-ui", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the app's Deployment was not applied: %v", err)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "gcr.io/heptio-images/ks-guestbook-demo:0.2" {
		t.Errorf("Deployment image %q, want the repository's", img)
	}

	cancel()
	waitFor("stopped")
	for line := range lines {
		seen = append(seen, line)
	}
	if err := <-done; err != nil {
		t.Fatalf("run after cancel: %v, want nil (a clean stop)", err)
	}
	var prev string
	for _, line := range seen {
		if !strings.HasPrefix(line, "status ") {
			continue
		}
		if line == prev {
			t.Errorf("status %q printed twice in a row, want changes only:\n%s", line, strings.Join(seen, "\n"))
		}
		prev = line
	}
}
