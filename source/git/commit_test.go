package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/fluxcd/gitkit"
	"github.com/fluxcd/pkg/gittestserver"
	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source"
)

// writeFile returns an Edit that writes one file.
func writeFile(p, content string) func(context.Context, billy.Filesystem) ([]string, error) {
	return func(_ context.Context, fsys billy.Filesystem) ([]string, error) {
		return []string{p}, util.WriteFile(fsys, p, []byte(content), 0o644)
	}
}

var testAuthor = object.Signature{Name: "updater", Email: "updater@example.invalid", When: time.Unix(1767225600, 0)}

// readAt resolves branch and reads p from its tip through a fresh Source
// (no cached refs).
func readAt(t *testing.T, repo source.Repository, branch, p string) (string, source.Revision) {
	t.Helper()
	s := newSource(t)
	rev, err := s.Resolve(context.Background(), repo, branch)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(context.Background(), repo, rev)
	if err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(snap, p)
	if err != nil {
		t.Fatalf("read %s at %s: %v", p, branch, err)
	}
	return string(data), rev
}

// TestCommitPushesOverSSH commits through fluxcd's SSH git server
// (gitkit runs the real git-receive-pack): host keys enforced, the commit
// builds on the branch tip, a forced target branch is base plus the
// commit, and a branch moved between fetch and push is ErrBranchMoved with
// nothing written.
func TestCommitPushesOverSSH(t *testing.T) {
	key := newSSHKey(t)
	srv := gittestserver.NewGitServer(t.TempDir()).Auth("git", "unused").KeyDir(t.TempDir())
	srv.PublicKeyLookupFunc(func(content string) (*gitkit.PublicKey, error) {
		if content != key.authorized {
			return nil, errors.New("unknown key")
		}
		return &gitkit.PublicKey{Id: "test"}, nil
	})
	if err := srv.ListenSSH(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.StartSSH() }()
	t.Cleanup(func() { _ = srv.StopSSH() })

	w := newWorkRepo(t, srv.Root(), "app")
	w.write(map[string]string{"app/values.yaml": "image: nginx:1.0\n", "other/keep.yaml": "x: 1\n"})
	base := w.commit("one")
	w.publish()

	hostKey := readHostKey(t, srv)
	addr := strings.TrimPrefix(srv.SSHAddress(), "ssh://git@")
	host, port, _ := strings.Cut(addr, ":")
	knownHosts := []byte(fmt.Sprintf("[%s]:%s %s\n", host, port, hostKey))
	repo := source.Repository{URL: srv.SSHAddress() + "/app.git", Credentials: &source.Credentials{SSHPrivateKey: key.private, KnownHosts: knownHosts}}
	s := newSource(t)
	ctx := context.Background()

	res, err := s.Commit(ctx, repo, CommitRequest{Base: "main", Edit: writeFile("app/values.yaml", "image: nginx:1.1\n"), Message: "bump", Author: testAuthor})
	if err != nil {
		t.Fatalf("commit over ssh: %v", err)
	}
	if res.Base != base || res.Branch != "main" || len(res.Commit) != 40 {
		t.Fatalf("result = %+v, want a commit on main over %s", res, base)
	}
	got, rev := readAt(t, repo, "main", "app/values.yaml")
	if got != "image: nginx:1.1\n" || rev.Commit != res.Commit {
		t.Fatalf("main at %s has %q, want %s with the new values", rev.Commit, got, res.Commit)
	}
	if keep, _ := readAt(t, repo, "main", "other/keep.yaml"); keep != "x: 1\n" {
		t.Fatalf("an untouched file changed: %q", keep)
	}
	w.git("fetch", "-q", w.bare, "main")
	if parent := w.git("rev-parse", "FETCH_HEAD^"); parent != base {
		t.Fatalf("parent of the pushed commit = %s, want %s", parent, base)
	}
	if msg := w.git("log", "-1", "--format=%an <%ae> %s", "FETCH_HEAD"); msg != "updater <updater@example.invalid> bump" {
		t.Fatalf("commit = %q", msg)
	}

	// A target branch of its own: reset to main plus the commit, forced.
	res2, err := s.Commit(ctx, repo, CommitRequest{Base: "main", Target: "image-updates", Edit: writeFile("app/values.yaml", "image: nginx:1.2\n"), Message: "bump 1.2", Author: testAuthor})
	if err != nil {
		t.Fatal(err)
	}
	if got, rev := readAt(t, repo, "image-updates", "app/values.yaml"); got != "image: nginx:1.2\n" || rev.Commit != res2.Commit {
		t.Fatalf("target branch = %q at %s", got, rev.Commit)
	}
	if got, _ := readAt(t, repo, "main", "app/values.yaml"); got != "image: nginx:1.1\n" {
		t.Fatalf("main moved with the target branch: %q", got)
	}

	// Someone commits between our fetch and our push.
	raced, err := s.Commit(ctx, repo, CommitRequest{Base: "main", Message: "lost", Author: testAuthor,
		Edit: func(ctx context.Context, fsys billy.Filesystem) ([]string, error) {
			w.git("pull", "-q", w.bare, "main")
			w.write(map[string]string{"other/keep.yaml": "x: 2\n"})
			w.commit("someone else")
			w.git("push", "-q", w.bare, "HEAD:main")
			return writeFile("app/values.yaml", "image: nginx:9\n")(ctx, fsys)
		}})
	if !errors.Is(err, ErrBranchMoved) || raced.Commit != "" {
		t.Fatalf("commit over a moved branch = %+v, %v; want ErrBranchMoved", raced, err)
	}
	if got, _ := readAt(t, repo, "main", "app/values.yaml"); got != "image: nginx:1.1\n" {
		t.Fatalf("the lost commit landed: %q", got)
	}
	if got, _ := readAt(t, repo, "main", "other/keep.yaml"); got != "x: 2\n" {
		t.Fatalf("the other committer's change is gone: %q", got)
	}

	// A wrong host key refuses before anything is sent.
	other := newSSHKey(t)
	wrong := source.Repository{URL: repo.URL, Credentials: &source.Credentials{SSHPrivateKey: key.private,
		KnownHosts: []byte(fmt.Sprintf("[%s]:%s %s\n", host, port, other.authorized))}}
	if _, err := s.Commit(ctx, wrong, CommitRequest{Base: "main", Edit: writeFile("a", "b"), Author: testAuthor}); !errors.Is(err, source.ErrAuthentication) {
		t.Fatalf("wrong host key: %v, want ErrAuthentication", err)
	}
}

// TestCommitPushesOverHTTP pushes through the real smart-HTTP server
// (git http-backend) with basic credentials; without them the push is
// refused and nothing moves; the URL policy refuses before connecting, and
// an Edit that writes nothing commits nothing.
func TestCommitPushesOverHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := gitserver.DefaultOptions()
	opts.PushUsername, opts.PushPassword = "pusher", "push-secret-value"
	srv, base := testfiles.GitRepo(t, opts, "rw", fstest.MapFS{"kustomization.yaml": {Data: []byte("resources: []\n")}})
	s := newSource(t)
	anon := source.Repository{URL: srv.RepoURL("rw")}
	if _, err := s.Commit(ctx, anon, CommitRequest{Edit: writeFile("a.yaml", "a: 1\n"), Message: "m", Author: testAuthor}); !errors.Is(err, source.ErrAuthentication) {
		t.Fatalf("push without credentials: %v, want ErrAuthentication", err)
	} else if strings.Contains(err.Error(), "push-secret-value") {
		t.Fatalf("error holds the password: %v", err)
	}
	if head, _ := srv.Head(ctx, "rw"); head != base {
		t.Fatalf("refused push moved main to %s", head)
	}
	repo := source.Repository{URL: srv.RepoURL("rw"), Credentials: &source.Credentials{Username: "pusher", Password: "push-secret-value"}}
	res, err := s.Commit(ctx, repo, CommitRequest{Edit: writeFile("a.yaml", "a: 1\n"), Message: "m", Author: testAuthor})
	if err != nil {
		t.Fatal(err)
	}
	if head, _ := srv.Head(ctx, "rw"); head != res.Commit || res.Base != base || res.Branch != "main" {
		t.Fatalf("head %s, result %+v", head, res)
	}
	if got, _ := readAt(t, repo, "main", "a.yaml"); got != "a: 1\n" {
		t.Fatalf("pushed file = %q", got)
	}
	none, err := s.Commit(ctx, repo, CommitRequest{Edit: func(context.Context, billy.Filesystem) ([]string, error) { return nil, nil }, Author: testAuthor})
	if err != nil || none.Commit != "" {
		t.Fatalf("empty edit = %+v, %v; want no commit", none, err)
	}
	denied := newSource(t, func(o *Options) { o.Policy = &source.URLPolicy{DenyLoopback: true} })
	if _, err := denied.Commit(ctx, repo, CommitRequest{Edit: writeFile("b", "b"), Author: testAuthor}); !errors.Is(err, source.ErrURLNotAllowed) {
		t.Fatalf("policy: %v, want ErrURLNotAllowed", err)
	}
}
