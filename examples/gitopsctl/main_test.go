package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/testenv"
	"k8s.io/client-go/kubernetes"
)

// cluster is the one local cluster the tests of this package share
// (TestClusterUp starts its own through the binary, which is what it
// tests).
var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}

// runCLI runs gitopsctl in-process against the shared cluster and returns
// its exit status and outputs.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// appFixture copies testdata/app to a folder of its own (so a test can
// change it) and writes an Application deploying it into ns; it returns
// the Application file and the folder.
func appFixture(t *testing.T, ns string) (appFile, repo string) {
	t.Helper()
	return namedAppFixture(t, ns, "fixture")
}

// namedAppFixture is appFixture with an application name of its own, for a
// test that must not see the objects other tests' "fixture" apps left
// (an app's objects are tracked by its name).
func namedAppFixture(t *testing.T, ns, name string) (appFile, repo string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "repo")
	if err := os.CopyFS(repo, os.DirFS("testdata/app")); err != nil {
		t.Fatal(err)
	}
	appFile = filepath.Join(t.TempDir(), "app.yaml")
	app := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
spec:
  source:
    repoURL: %s
    path: .
  destination:
    server: https://kubernetes.default.svc
    namespace: %s
`, name, repo, ns)
	if err := os.WriteFile(appFile, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	return appFile, repo
}

func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}
