package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
)

// gitopsctl hydrate renders an app's Helm chart dry source offline and
// commits it into a local clone, on the checked-out hydrated branch, with
// Argo CD's layout and note, pushing nothing; run again for a dry commit
// that changes only a comment, it commits nothing; a clone on another
// branch is refused by name.
func TestHydrateIntoLocalClone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	if _, err := gs.CreateRepository(ctx, "deploy", fstest.MapFS{
		"chart/Chart.yaml":               {Data: []byte("apiVersion: v2\nname: greeter\nversion: 0.1.0\n")},
		"chart/values.yaml":              {Data: []byte("# hello\ngreeting: hello\n")},
		"chart/templates/configmap.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\ndata: {greeting: '{{ .Values.greeting }}'}\n")},
	}); err != nil {
		t.Fatal(err)
	}
	url := gs.RepoURL("deploy")
	dir := t.TempDir()
	appFile := filepath.Join(dir, "app.yaml")
	if err := os.WriteFile(appFile, []byte(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: greeter, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: greeter}
  sourceHydrator:
    drySource: {repoURL: `+url+`, targetRevision: HEAD, path: chart}
    syncSource: {targetBranch: env/dev, path: dev}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(dir, "clone")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("clone", "--quiet", url, clone)

	// The clone has main checked out, not the hydrated branch.
	code, _, stderr := runCLI(t, "hydrate", "--app", appFile, "--clone", clone)
	if code == 0 || !strings.Contains(stderr, "env/dev") {
		t.Fatalf("hydrate into a clone on main: exit %d, %s", code, stderr)
	}

	git("-C", clone, "switch", "--quiet", "--orphan", "env/dev")
	code, stdout, stderr := runCLI(t, "hydrate", "--app", appFile, "--clone", clone)
	if code != 0 || !strings.Contains(stdout, "hydrated dry commit") {
		t.Fatalf("hydrate: exit %d\n%s%s", code, stdout, stderr)
	}
	head := git("-C", clone, "rev-parse", "HEAD")
	if files := git("-C", clone, "ls-tree", "-r", "--name-only", "HEAD"); files != ".gitattributes\ndev/README.md\ndev/hydrator.metadata\ndev/manifest.yaml\nhydrator.metadata" {
		t.Errorf("hydrated tree:\n%s", files)
	}
	if m := git("-C", clone, "show", "HEAD:dev/manifest.yaml"); !strings.Contains(m, "greeting: hello") || !strings.Contains(m, "name: greeter") {
		t.Errorf("manifest.yaml:\n%s", m)
	}
	dry1, _ := gs.Head(ctx, "deploy")
	if note := git("-C", clone, "notes", "--ref", "hydrator.metadata", "show", head); note != `{"drySha":"`+dry1+`"}` {
		t.Errorf("note %s", note)
	}
	if _, err := gs.Git(ctx, "deploy", "rev-parse", "--verify", "refs/heads/env/dev"); err == nil {
		t.Error("hydrate pushed env/dev; it must only commit in the clone")
	}

	dry2, err := gs.Commit(ctx, "deploy", "comment", map[string][]byte{"chart/values.yaml": []byte("# hello, world\ngreeting: hello\n")})
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "hydrate", "--app", appFile, "--clone", clone)
	if code != 0 || !strings.Contains(stdout, "nothing committed") {
		t.Fatalf("hydrate a comment-only dry commit: exit %d\n%s%s", code, stdout, stderr)
	}
	if now := git("-C", clone, "rev-parse", "HEAD"); now != head {
		t.Errorf("a comment-only dry commit moved the branch to %s", now)
	}
	if note := git("-C", clone, "notes", "--ref", "hydrator.metadata", "show", head); note != `{"drySha":"`+dry2+`"}` {
		t.Errorf("note after the comment-only commit %s", note)
	}
}
