package gitserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func startServer(t *testing.T) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// gitClient runs the git client as a user would, against the server.
func gitClient(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestCloneAndCommitThroughHTTP(t *testing.T) {
	s := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, err := s.CreateRepository(ctx, "demo", fstest.MapFS{
		"apps/cm.yaml": {Data: []byte("kind: ConfigMap\n")},
		"README.md":    {Data: []byte("hello\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 40 {
		t.Fatalf("commit %q is not a SHA-1", first)
	}

	ls := gitClient(t, "", "ls-remote", s.RepoURL("demo"))
	if !strings.Contains(ls, first+"\trefs/heads/main") {
		t.Fatalf("ls-remote does not show main at %s:\n%s", first, ls)
	}

	clone := filepath.Join(t.TempDir(), "clone")
	gitClient(t, "", "clone", "--quiet", s.RepoURL("demo"), clone)
	data, err := os.ReadFile(filepath.Join(clone, "apps", "cm.yaml"))
	if err != nil || string(data) != "kind: ConfigMap\n" {
		t.Fatalf("cloned file: %q, %v", data, err)
	}

	second, err := s.Commit(ctx, "demo", "bump", map[string][]byte{
		"apps/cm.yaml": []byte("kind: ConfigMap\nx: 2\n"),
		"README.md":    nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatal("commit did not move the branch")
	}
	if head, err := s.Head(ctx, "demo"); err != nil || head != second {
		t.Fatalf("Head = %q, %v; want %s", head, err, second)
	}
	gitClient(t, clone, "pull", "--quiet", "--ff-only")
	if got := gitClient(t, clone, "rev-parse", "HEAD"); got != second {
		t.Fatalf("pulled %s, want %s", got, second)
	}
	if _, err := os.Stat(filepath.Join(clone, "README.md")); !os.IsNotExist(err) {
		t.Fatalf("deleted file still there after pull: %v", err)
	}
	if s.Requests() == 0 {
		t.Fatal("no request counted")
	}
}

func TestPushIsRefused(t *testing.T) {
	s := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.CreateRepository(ctx, "ro", fstest.MapFS{"a": {Data: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	gitClient(t, "", "clone", "--quiet", s.RepoURL("ro"), clone)
	if err := os.WriteFile(filepath.Join(clone, "b"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitClient(t, clone, "add", "b")
	gitClient(t, clone, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "--quiet", "-m", "b")
	cmd := exec.CommandContext(ctx, "git", "push", "origin", "HEAD:main")
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(), "GIT_TERMINAL_PROMPT=0")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("push over HTTP succeeded:\n%s", out)
	}
}

func TestBadNamesAndPaths(t *testing.T) {
	s := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range []string{"", "../x", "a/b", ".hidden", "x.git"} {
		if _, err := s.CreateRepository(ctx, name, fstest.MapFS{}); err == nil {
			t.Errorf("CreateRepository(%q) succeeded", name)
		}
	}
	if _, err := s.CreateRepository(ctx, "ok", fstest.MapFS{"a": {Data: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../escape", "/abs", ".git/config"} {
		if _, err := s.Commit(ctx, "ok", "bad", map[string][]byte{p: []byte("x")}); err == nil {
			t.Errorf("Commit with path %q succeeded", p)
		}
	}
	if _, err := s.Commit(ctx, "missing", "m", nil); err == nil {
		t.Error("Commit to a missing repository succeeded")
	}
}
