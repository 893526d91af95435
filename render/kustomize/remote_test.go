package kustomize

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/render"
)

// gitRepo makes a local git repository holding testdata/repo/base under
// deploy/ and returns its path.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"kustomization.yaml", "deployment.yaml", "service.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata/repo/base", f))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.MkdirAll(filepath.Join(dir, "deploy"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "deploy", f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "."},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "base"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// TestRemoteGitBaseWhenAllowed: with AllowRemoteResources a git base is
// cloned, read through its own Root, and the clone is removed afterwards;
// without it the same kustomization is refused (TestS9...).
func TestRemoteGitBaseWhenAllowed(t *testing.T) {
	repo := gitRepo(t)
	snap := fixture(t)
	snap.MapFS["remote/kustomization.yaml"] = &fstest.MapFile{Data: []byte("namePrefix: r-\nresources:\n  - file://" + repo + "//deploy?ref=main\n")}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "kustomize-*"))
	opts := DefaultOptions()
	opts.AllowRemoteResources = true
	objs, err := New(opts).Render(context.Background(), render.Input{FS: snap, Path: "remote"})
	if err != nil {
		t.Fatal(err)
	}
	m := byName(objs)
	if m["Deployment/r-web"] == nil || m["Service/r-web"] == nil {
		t.Fatalf("remote base not rendered: %v", m)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "kustomize-*"))
	if len(after) > len(before) {
		t.Fatalf("clone directories left behind: %v", strings.Join(after, " "))
	}
	if _, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "remote"}); err == nil {
		t.Fatal("remote base rendered with remote resources off")
	}
}
