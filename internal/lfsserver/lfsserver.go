package lfsserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed" // the pinned module
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubegitops/gitops/internal/toolbuild"
)

var (
	//go:embed module/go.mod.txt
	goMod []byte
	//go:embed module/go.sum.txt
	goSum []byte
	//go:embed module/tools.go.txt
	toolsGo []byte
)

// lfsModule is the git-lfs module whose test server is built.
const lfsModule = "github.com/git-lfs/git-lfs/v3"

// binary is the built program's name.
const binary = "lfstest-gitserver"

// Server is a running lfstest-gitserver.
type Server struct {
	// URL is its plain-HTTP base URL ("http://127.0.0.1:port").
	URL string
	// Dir holds its bare repositories (LFSTEST_DIR).
	Dir string

	uploads atomic.Int64
}

// Build returns the path of lfstest-gitserver, building it into the user
// cache the first time.
func Build(ctx context.Context) (string, error) {
	m := toolbuild.Module{Name: "gitops-lfstest", GoMod: goMod, GoSum: goSum, ToolsGo: toolsGo}
	opts := toolbuild.Options{}
	bin, err := m.BinDir(opts)
	if err != nil {
		return "", err
	}
	path := filepath.Join(bin, binary)
	_, err = m.Ensure(ctx, nil, opts, func(string) bool { return !toolbuild.IsExecutable(path) },
		func(ctx context.Context, src, binDir string) error {
			out, err := toolbuild.GoRun(ctx, opts, src, "mod", "download", "-json", lfsModule)
			if err != nil {
				return fmt.Errorf("lfsserver: download %s: %w\n%s", lfsModule, err, toolbuild.Tail(out, 2000))
			}
			var mod struct{ Dir string }
			if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
				return fmt.Errorf("lfsserver: no folder for %s", lfsModule)
			}
			tmp := filepath.Join(binDir, binary+".tmp")
			file := filepath.Join(mod.Dir, "t", "cmd", binary+".go")
			if out, err := toolbuild.GoRun(ctx, opts, src, "build", "-tags", "testtools", "-o", tmp, file); err != nil {
				return fmt.Errorf("lfsserver: build %s: %w\n%s", binary, err, toolbuild.Tail(out, 4000))
			}
			return os.Rename(tmp, filepath.Join(binDir, binary))
		})
	if err != nil {
		return "", err
	}
	return path, nil
}

// Start finds (or builds, once) the server and starts it; it stops with
// the test.
func Start(t testing.TB) *Server {
	t.Helper()
	// make tools built it, so the test finds it; outside make, or after a
	// change of its pin, it is built here with no deadline (a build takes
	// the machine's time, not the test's).
	bin, err := Build(context.Background())
	if err != nil {
		t.Fatalf("%v\n(run `make tools` to build the programs the tests run)", err)
	}
	dir, state := t.TempDir(), t.TempDir()
	urlFile := filepath.Join(state, "url")
	cmd := exec.Command(bin)
	cmd.Dir = state
	cmd.Env = append(os.Environ(), "LFSTEST_DIR="+dir, "LFSTEST_URL="+urlFile,
		"LFSTEST_SSL_URL="+filepath.Join(state, "ssl-url"), "LFSTEST_CLIENT_CERT_URL="+filepath.Join(state, "cc-url"),
		"LFSTEST_CERT="+filepath.Join(state, "cert"), "LFSTEST_CLIENT_CERT="+filepath.Join(state, "client-cert"),
		"LFSTEST_CLIENT_KEY="+filepath.Join(state, "client-key"), "LFSTEST_CLIENT_KEY_ENCRYPTED="+filepath.Join(state, "client-key-enc"))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	// It writes its URL once it listens (the last state file written is
	// the client key: all are there once it exists).
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(state, "client-key-enc")); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("lfstest-gitserver exited: %v\n%s", err, logs.String())
		case <-deadline:
			t.Fatalf("lfstest-gitserver did not start\n%s", logs.String())
		case <-tick.C:
		}
	}
	u, err := os.ReadFile(urlFile)
	if err != nil {
		t.Fatal(err)
	}
	return &Server{URL: strings.TrimSpace(string(u)), Dir: dir}
}

// RepoURL returns the clone URL of a repository.
func (s *Server) RepoURL(name string) string { return s.URL + "/" + name + ".git" }

// Pointer returns the Git LFS pointer file of content.
func Pointer(content []byte) []byte {
	sum := sha256.Sum256(content)
	return fmt.Appendf(nil, "version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", hex.EncodeToString(sum[:]), len(content))
}

// CreateRepository creates the bare repository name with files committed
// as they are and lfsFiles committed as pointers (tracked in
// .gitattributes) whose objects are uploaded, and returns the commit.
func (s *Server) CreateRepository(t testing.TB, name string, files, lfsFiles map[string][]byte) string {
	t.Helper()
	work := t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+work, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	bare := filepath.Join(s.Dir, name+".git")
	git(s.Dir, "init", "-q", "--bare", "-b", "main", bare)
	src := filepath.Join(work, "src")
	git(work, "init", "-q", "-b", "main", src)
	var attrs []string
	write := func(p string, data []byte) {
		full := filepath.Join(src, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, data := range files {
		write(p, data)
	}
	for p, data := range lfsFiles {
		write(p, Pointer(data))
		attrs = append(attrs, p+" filter=lfs diff=lfs merge=lfs -text")
		s.Upload(t, name, data)
	}
	sort.Strings(attrs)
	if len(attrs) > 0 {
		write(".gitattributes", []byte(strings.Join(attrs, "\n")+"\n"))
	}
	git(src, "add", "-A")
	git(src, "commit", "-q", "-m", "content")
	git(src, "push", "-q", bare, "main")
	return git(src, "rev-parse", "HEAD")
}

// Upload stores content as an LFS object of repository name through the
// batch API (upload operation, then the PUT it names), as `git lfs push`
// does.
func (s *Server) Upload(t testing.TB, name string, content []byte) {
	t.Helper()
	sum := sha256.Sum256(content)
	oid := hex.EncodeToString(sum[:])
	body, _ := json.Marshal(map[string]any{"operation": "upload", "transfers": []string{"basic"},
		"objects": []map[string]any{{"oid": oid, "size": len(content)}}})
	req, _ := http.NewRequest(http.MethodPost, s.RepoURL(name)+"/info/lfs/objects/batch", bytes.NewReader(body))
	req.Header.Set("Accept", "application/vnd.git-lfs+json")
	req.Header.Set("Content-Type", "application/vnd.git-lfs+json")
	req.SetBasicAuth("requirecreds", "pass")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Objects []struct {
			Actions map[string]struct {
				Href   string            `json:"href"`
				Header map[string]string `json:"header"`
			} `json:"actions"`
		} `json:"objects"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil || len(out.Objects) != 1 {
		t.Fatalf("lfs upload batch of %s: status %d", name, resp.StatusCode)
	}
	up, ok := out.Objects[0].Actions["upload"]
	if !ok {
		return // already there
	}
	put, _ := http.NewRequest(http.MethodPut, up.Href, bytes.NewReader(content))
	for k, v := range up.Header {
		put.Header.Set(k, v)
	}
	put.SetBasicAuth("requirecreds", "pass")
	presp, err := http.DefaultClient.Do(put)
	if err != nil {
		t.Fatal(err)
	}
	presp.Body.Close()
	if presp.StatusCode/100 != 2 {
		t.Fatalf("lfs upload of %s: status %d", oid, presp.StatusCode)
	}
	s.uploads.Add(1)
}
