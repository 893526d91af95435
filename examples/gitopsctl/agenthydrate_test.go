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

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gitopsctl agent --hydrate runs the source hydrator as the operator
// does: an app with spec.sourceHydrator over a Helm chart on the local
// Git server gets a hydrated commit on env/dev, pushed with the
// --repositories repository-write Secret, and syncs from it (the refresh
// interval is ten minutes: the hydration's hint does it); a dry commit
// changing only a comment makes no hydrated commit; a dry commit that
// changes the chart's output is hydrated and synced in turn. Without
// --hydrate the agent names the app it does not hydrate.
func TestAgentHydrates(t *testing.T) {
	ns := cluster.TestNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gopts := gitserver.DefaultOptions()
	gopts.PushUsername, gopts.PushPassword = "hydrator", "write-secret"
	gs := testfiles.GitServer(t, gopts)
	if _, err := gs.CreateRepository(ctx, "deploy", fstest.MapFS{
		"chart/Chart.yaml":               {Data: []byte("apiVersion: v2\nname: greeter\nversion: 0.1.0\n")},
		"chart/values.yaml":              {Data: []byte("# greeting of the day\ngreeting: hello\n")},
		"chart/templates/configmap.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\ndata: {greeting: '{{ .Values.greeting }}'}\n")},
	}); err != nil {
		t.Fatal(err)
	}
	url := gs.RepoURL("deploy")
	dir := t.TempDir()
	appsDir, reposFile := filepath.Join(dir, "apps"), filepath.Join(dir, "repos.yaml")
	if err := os.Mkdir(appsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, body := range map[string]string{
		filepath.Join(appsDir, "greeter.yaml"): `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: greeter}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: ` + ns + `}
  sourceHydrator:
    drySource: {repoURL: ` + url + `, targetRevision: HEAD, path: chart}
    syncSource: {targetBranch: env/dev, path: dev}
  syncPolicy: {automated: {}}
`,
		reposFile: `apiVersion: v1
kind: Secret
metadata:
  name: deploy-write
  labels: {argocd.argoproj.io/secret-type: repository-write}
stringData: {url: "` + url + `", username: hydrator, password: write-secret}
`,
	} {
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// A hydrator that would never run is refused by name.
	code, _, stderr := runCLI(t, "agent", "--apps", appsDir, "--kubeconfig", cluster.Kubeconfig(), "--hydrator-interval", "0", "--hydrate")
	if code == 0 || !strings.Contains(stderr, "--hydrator-interval 0s") {
		t.Errorf("--hydrator-interval 0: exit %d, stderr %q", code, stderr)
	}

	agentCtx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	var stdout, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(agentCtx, []string{"agent", "--apps", appsDir, "--kubeconfig", cluster.Kubeconfig(), "--repositories", reposFile,
			"--interval", "10m", "--hydrate", "--hydrator-interval", "1s"}, &stdout, &errOut)
	}()
	cs := clientset(t)
	greeting := func() string {
		c, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "greeter", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return c.Data["greeting"]
	}
	tip := func() string {
		sha, err := gs.Git(ctx, "deploy", "rev-parse", "--verify", "--quiet", "refs/heads/env/dev")
		if err != nil {
			return ""
		}
		return sha
	}
	dry1, err := gs.Head(ctx, "deploy")
	if err != nil {
		t.Fatal(err)
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		if err := waitUntil(ctx, 2*time.Minute, func() (bool, error) { return cond(), nil }); err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", what, err, stdout.String(), errOut.String())
		}
	}
	wait("hydrated and synced", func() bool { return greeting() == "hello" && tip() != "" })
	hydrated1 := tip()
	mustContain(t, "agent output", stdout.String(),
		fmt.Sprintf("Hydrated       greeter @ %s: dry commit %s hydrated as %s on env/dev", dry1[:7], dry1[:7], hydrated1[:7]))
	if files, err := gs.Git(ctx, "deploy", "ls-tree", "-r", "--name-only", hydrated1); err != nil || !strings.Contains(files, "dev/manifest.yaml") {
		t.Errorf("hydrated tree %q (%v)", files, err)
	}

	dry2, err := gs.Commit(ctx, "deploy", "reword a comment", map[string][]byte{"chart/values.yaml": []byte("# the greeting\ngreeting: hello\n")})
	if err != nil {
		t.Fatal(err)
	}
	wait("the comment-only dry commit compared", func() bool {
		return strings.Contains(stdout.String(), fmt.Sprintf("greeter @ %s: dry commit %s renders as %s on env/dev does: nothing committed", dry2[:7], dry2[:7], hydrated1[:7]))
	})
	if got := tip(); got != hydrated1 {
		t.Errorf("env/dev moved to %s on a comment-only dry commit, want %s", got, hydrated1)
	}

	dry3, err := gs.Commit(ctx, "deploy", "greet anew", map[string][]byte{"chart/values.yaml": []byte("greeting: hi\n")})
	if err != nil {
		t.Fatal(err)
	}
	wait("the next dry commit hydrated and synced", func() bool { return greeting() == "hi" })
	hydrated2 := tip()
	if hydrated2 == hydrated1 {
		t.Fatalf("env/dev still at %s after a dry commit changing the output", hydrated1)
	}
	mustContain(t, "agent output", stdout.String(), fmt.Sprintf("greeter @ %s: dry commit %s hydrated as %s on env/dev", dry3[:7], dry3[:7], hydrated2[:7]))
	if n := strings.Count(stdout.String(), "Hydrated       greeter"); n != 3 {
		t.Errorf("%d Hydrated lines, want one per dry commit (3):\n%s", n, stdout.String())
	}

	stopAgent()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("agent exit %d after Ctrl-C\n%s", code, errOut.String())
		}
	case <-ctx.Done():
		t.Fatal("agent did not stop after Ctrl-C")
	}
}

// Without --hydrate, the agent names each app with spec.sourceHydrator
// that nothing hydrates.
func TestAgentWarnsNotHydrated(t *testing.T) {
	var b strings.Builder
	app := &gitops.Application{}
	app.Name = "greeter"
	app.Spec.SourceHydrator = &v1alpha1.SourceHydrator{SyncSource: v1alpha1.SyncSource{TargetBranch: "env/dev", Path: "dev"}}
	warnNotHydrated(&b, []*gitops.Application{app, {}})
	if got := b.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "greeter has spec.sourceHydrator but --hydrate is not set") {
		t.Errorf("warning %q", got)
	}
}
