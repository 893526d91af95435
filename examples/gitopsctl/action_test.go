package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops/health/actions"
)

func TestActionTest_ShippedActionsPass(t *testing.T) {
	dir := copyFS(t, actions.BuiltinScripts())
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"action-test", "-v", dir}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	mustContain(t, "action-test output", out, "PASS batch/CronJob/actions create-job testdata/cronjob.yaml", "7 action folders")
	if !strings.HasSuffix(out, ", 0 failed\n") {
		t.Errorf("summary missing or wrong:\n%s", out)
	}
}

// TestActionTest_ArgoCDResourceCustomizations runs action-test over Argo
// CD's own action tests (every kind of its resource_customizations with an
// action_test.yaml, kept in health/actions/testdata/argocd): all pass, as
// in Argo CD, the CronJob's create-job (a list of
// {k8sOperation, unstructuredObj}) and every restart or reconcile (stamped
// with the time) included.
func TestActionTest_ArgoCDResourceCustomizations(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"action-test", "-v", filepath.Join("..", "..", "health", "actions", "testdata", "argocd")}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	mustContain(t, "action-test output", out,
		"PASS batch/CronJob/actions create-job testdata/cronjob.yaml",
		"PASS apps/Deployment/actions restart testdata/deployment.yaml",
		"PASS helm.toolkit.fluxcd.io/HelmRelease/actions reconcile testdata/initial_helmrelease.yaml",
		"PASS argoproj.io/Rollout/actions restart testdata/rollout_not_restarted.yaml",
		"38 action folders")
	if !strings.HasSuffix(out, ", 0 failed\n") {
		t.Errorf("summary missing or wrong:\n%s", out)
	}
}

func TestActionTest_FailingCaseExitsOne(t *testing.T) {
	dir := copyFS(t, actions.BuiltinScripts())
	file := filepath.Join(dir, "apps", "Deployment", "actions", "testdata", "deployment-scaled.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.Replace(data, []byte("replicas: 5"), []byte("replicas: 6"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"action-test", dir}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stdout.String())
	}
	mustContain(t, "action-test output", stdout.String(), "FAIL apps/Deployment/actions scale testdata/deployment.yaml", ", 1 failed")
	if code := run(context.Background(), []string{"action-test", t.TempDir()}, &stdout, &stderr); code != 1 {
		t.Fatalf("empty folder: exit %d, want 1", code)
	}
	if code := run(context.Background(), []string{"action-test"}, &stdout, &stderr); code != 2 {
		t.Fatalf("no folder: exit %d, want 2", code)
	}
}

// TestActionListAndRun syncs the fixture app, lists the Deployment's
// actions, scales it with a parameter and checks the cluster followed.
func TestActionListAndRun(t *testing.T) {
	ns := cluster.TestNamespace(t)
	appFile, _ := namedAppFixture(t, ns, "actions") // not "fixture": its objects would be TestRenderDiffSyncStatus's to prune
	kc := []string{"--kubeconfig", cluster.Kubeconfig()}
	if code, out, errOut := runCLI(t, append([]string{"sync", "--app", appFile}, kc...)...); code != 0 {
		t.Fatalf("sync: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, append([]string{"action", "list", "--app", appFile, "apps/Deployment/web"}, kc...)...)
	if code != 0 {
		t.Fatalf("action list: exit %d\n%s", code, errOut)
	}
	mustContain(t, "action list", out, "ACTION", "restart", "scale", "replicas", "resume")
	// Flags after the positionals work too.
	code, out, errOut = runCLI(t, append([]string{"action", "run", "--app", appFile, "apps/Deployment/web", "scale", "--param", "replicas=2"}, kc...)...)
	if code != 0 {
		t.Fatalf("action run: exit %d\n%s", code, errOut)
	}
	mustContain(t, "action run", out, "patch apps/Deployment "+ns+"/web")
	cs := clientset(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 2, err
	}); err != nil {
		t.Fatalf("two ready replicas: %v", err)
	}
	code, _, errOut = runCLI(t, append([]string{"action", "run", "--app", appFile, "apps/Deployment/web", "explode"}, kc...)...)
	if code != 1 || !strings.Contains(errOut, "unknown action") {
		t.Fatalf("unknown action: exit %d\n%s", code, errOut)
	}
	if code, _, _ := runCLI(t, "action", "run", "--app", appFile, "apps/Deployment/web"); code != 2 {
		t.Fatalf("missing ACTION: exit %d, want 2", code)
	}
}
