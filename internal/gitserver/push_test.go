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

// With PushPassword, a push with the right credentials lands, one without
// (or with wrong ones) is refused, and Commit then commits on top of what
// was pushed.
func TestAuthenticatedPush(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := DefaultOptions()
	opts.PushUsername, opts.PushPassword = "pusher", "push-pass"
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.CreateRepository(ctx, "rw", fstest.MapFS{"a": {Data: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	gitClient(t, "", "clone", "--quiet", s.RepoURL("rw"), clone)
	if err := os.WriteFile(filepath.Join(clone, "b"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitClient(t, clone, "add", "b")
	gitClient(t, clone, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "--quiet", "-m", "b")
	push := func(url string) error {
		cmd := exec.CommandContext(ctx, "git", "push", "--quiet", url, "HEAD:main")
		cmd.Dir = clone
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(), "GIT_TERMINAL_PROMPT=0")
		return cmd.Run()
	}
	withCreds := func(user, pass string) string {
		return strings.Replace(s.RepoURL("rw"), "http://", "http://"+user+":"+pass+"@", 1)
	}
	if push(s.RepoURL("rw")) == nil || push(withCreds("pusher", "wrong")) == nil {
		t.Fatal("a push without the right credentials landed")
	}
	if err := push(withCreds("pusher", "push-pass")); err != nil {
		t.Fatalf("authenticated push: %v", err)
	}
	pushed := gitClient(t, clone, "rev-parse", "HEAD")
	if head, _ := s.Head(ctx, "rw"); head != pushed {
		t.Fatalf("head %s, pushed %s", head, pushed)
	}
	next, err := s.Commit(ctx, "rw", "c", map[string][]byte{"c": []byte("c")})
	if err != nil {
		t.Fatal(err)
	}
	gitClient(t, clone, "pull", "--quiet", s.RepoURL("rw"), "main")
	if got := gitClient(t, clone, "rev-parse", "HEAD~1"); got != pushed || gitClient(t, clone, "rev-parse", "HEAD") != next {
		t.Fatalf("Commit did not build on the pushed commit")
	}
}

// With ReadPassword, a clone without the right credentials is refused and
// one with them gets the repository; Commit still works.
func TestAuthenticatedRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := DefaultOptions()
	opts.ReadUsername, opts.ReadPassword = "reader", "read-pass"
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.CreateRepository(ctx, "private", fstest.MapFS{"a": {Data: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	next, err := s.Commit(ctx, "private", "b", map[string][]byte{"b": []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	clone := func(url string) error {
		cmd := exec.CommandContext(ctx, "git", "clone", "--quiet", url, filepath.Join(t.TempDir(), "c"))
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(), "GIT_TERMINAL_PROMPT=0")
		return cmd.Run()
	}
	withCreds := func(user, pass string) string {
		return strings.Replace(s.RepoURL("private"), "http://", "http://"+user+":"+pass+"@", 1)
	}
	if clone(s.RepoURL("private")) == nil || clone(withCreds("reader", "wrong")) == nil {
		t.Fatal("a clone without the right credentials got the repository")
	}
	dir := filepath.Join(t.TempDir(), "ok")
	gitClient(t, "", "clone", "--quiet", withCreds("reader", "read-pass"), dir)
	if head := gitClient(t, dir, "rev-parse", "HEAD"); head != next {
		t.Fatalf("cloned head %s, want %s", head, next)
	}
}
