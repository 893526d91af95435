package git

import (
	"bytes"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// gitServer serves bare repositories under root with the real
// `git http-backend`, counting ls-remote (info/refs) and upload-pack
// requests and, when user is set, demanding HTTP basic auth.
type gitServer struct {
	root        string
	srv         *httptest.Server
	infoRefs    atomic.Int64
	uploadPacks atomic.Int64
	user, pass  string
	// sawAuth counts requests that carried an Authorization header.
	sawAuth atomic.Int64
}

func newGitServer(t testing.TB, user, pass string) *gitServer {
	t.Helper()
	backend, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	g := &gitServer{root: t.TempDir(), user: user, pass: pass}
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(backend)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + g.root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			g.sawAuth.Add(1)
		}
		if g.user != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != g.user || p != g.pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/info/refs"):
			g.infoRefs.Add(1)
		case strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			g.uploadPacks.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// url returns the HTTP URL of repository name.
func (g *gitServer) url(name string) string { return g.srv.URL + "/" + name + ".git" }

// workRepo is a non-bare repository the tests commit to and publish as a
// bare repository on a server.
type workRepo struct {
	t    testing.TB
	dir  string
	bare string
}

// newWorkRepo creates a work repository with branch main and a bare copy
// named name under root.
func newWorkRepo(t testing.TB, root, name string) *workRepo {
	t.Helper()
	w := &workRepo{t: t, dir: t.TempDir(), bare: filepath.Join(root, name+".git")}
	w.git("init", "-q", "-b", "main", w.dir)
	return w
}

// git runs git in the work repository with a fixed identity and dates.
func (w *workRepo) git(args ...string) string {
	w.t.Helper()
	return runGit(w.t, w.dir, args...)
}

func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// write writes files (path -> content) into the work tree.
func (w *workRepo) write(files map[string]string) {
	w.t.Helper()
	for p, content := range files {
		full := filepath.Join(w.dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
}

// symlink creates a link at p pointing to target.
func (w *workRepo) symlink(target, p string) {
	w.t.Helper()
	full := filepath.Join(w.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Symlink(target, full); err != nil {
		w.t.Fatal(err)
	}
}

// commit commits everything and returns the commit id.
func (w *workRepo) commit(msg string) string {
	w.t.Helper()
	w.git("add", "-A")
	w.git("commit", "-q", "--allow-empty", "-m", msg)
	return w.git("rev-parse", "HEAD")
}

// publish pushes every branch and tag to the bare repository, creating it
// on first use.
func (w *workRepo) publish() {
	w.t.Helper()
	if _, err := os.Stat(w.bare); err != nil {
		runGit(w.t, filepath.Dir(w.bare), "init", "-q", "--bare", "-b", "main", w.bare)
	}
	w.git("push", "-q", "--force", "--tags", w.bare, "refs/heads/*:refs/heads/*")
}
