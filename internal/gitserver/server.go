package gitserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Server. Start from DefaultOptions.
type Options struct {
	// Dir holds the bare repositories and their working clones. Empty: a
	// new temporary folder that Close removes.
	Dir string
	// Branch is the branch every repository is created with. Default
	// "main".
	Branch string
	// AuthorName and AuthorEmail sign every commit (as author and
	// committer).
	AuthorName  string
	AuthorEmail string
	// CommandTimeout bounds each git command the server runs for a caller
	// (init, add, commit, push). Default 30 seconds.
	CommandTimeout time.Duration
	// PushUsername and PushPassword, when PushPassword is set, let clients
	// push over HTTP (git-receive-pack) with these basic credentials; a
	// push without them gets 401. Unset: every push is refused.
	PushUsername, PushPassword string
	// ReadUsername and ReadPassword, when ReadPassword is set, make every
	// fetch and clone need these basic credentials (a private repository);
	// one without them gets 401. Unset: anyone may read.
	ReadUsername, ReadPassword string
	// ReadBearerToken, when set, makes every fetch need
	// "Authorization: Bearer" with it (or ReadPassword's basic
	// credentials, when both are set).
	ReadBearerToken string
	// ReadCheck, when set, decides instead whether a fetch's request may
	// read (for tokens a test issues): true lets it.
	ReadCheck func(r *http.Request) bool
	// NoChallenge answers a fetch without valid read credentials with 404
	// and no WWW-Authenticate challenge, as GitHub and Bitbucket answer
	// for a private repository, instead of 401: a client that waits for a
	// challenge before it sends credentials never gets in.
	NoChallenge bool
	// PushGate, when set, is called before each push's pack is received
	// (the POST to git-receive-pack) and may block: a test holds a push
	// there to observe what its client shows meanwhile.
	PushGate func(r *http.Request)
	// TLS serves HTTPS with a certificate of httptest's own CA
	// (Server.CAPEM), valid for 127.0.0.1.
	TLS bool
	// SSH also serves Git over SSH on a second loopback port
	// (SSHRepoURL), with a fresh ed25519 host key (SSHKnownHosts). Clients
	// authenticate with a public key registered by AuthorizeSSHKey or
	// NewSSHKey, and then may fetch and push; other keys are refused.
	SSH bool
}

// DefaultOptions returns a temporary folder, branch main, a demo author and
// a 30 second bound per git command.
func DefaultOptions() Options {
	return Options{
		Branch:         "main",
		AuthorName:     "gitops demo",
		AuthorEmail:    "demo@gitops.invalid",
		CommandTimeout: 30 * time.Second,
	}
}

// Server is a running Git smart-HTTP server (and SSH server with
// Options.SSH). It is safe for concurrent
// use, but commits to one repository must not run concurrently.
type Server struct {
	opts     Options
	dir      string
	temp     bool
	git      string
	home     string
	ln       net.Listener
	srv      *http.Server
	done     chan error
	requests atomic.Int64
	anon     atomic.Int64
	caPEM    []byte
	tls      bool
	ssh      *sshServer

	closeOnce sync.Once
	closeErr  error
}

// repoName is what a repository may be called: one path element of safe
// characters, so a name can never leave the server's folder.
var repoName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// Start creates the server's folder, finds git and its http-backend, and
// serves on a loopback port until Close.
func Start(ctx context.Context, opts Options) (*Server, error) {
	def := DefaultOptions()
	if opts.Branch == "" {
		opts.Branch = def.Branch
	}
	if opts.AuthorName == "" {
		opts.AuthorName = def.AuthorName
	}
	if opts.AuthorEmail == "" {
		opts.AuthorEmail = def.AuthorEmail
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = def.CommandTimeout
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("gitserver: git is not installed (apt-get install git): %w", err)
	}
	s := &Server{opts: opts, git: gitBin, dir: opts.Dir}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "gitserver-"); err != nil {
			return nil, fmt.Errorf("gitserver: %w", err)
		}
		s.temp = true
	}
	if s.dir, err = filepath.Abs(s.dir); err != nil {
		return nil, fmt.Errorf("gitserver: %w", err)
	}
	s.home = filepath.Join(s.dir, ".home")
	for _, d := range []string{filepath.Join(s.dir, "repos"), filepath.Join(s.dir, "work"), s.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			s.cleanup()
			return nil, fmt.Errorf("gitserver: %w", err)
		}
	}
	execPath, err := s.output(ctx, "", "--exec-path")
	if err != nil {
		s.cleanup()
		return nil, err
	}
	backend := filepath.Join(execPath, "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		s.cleanup()
		return nil, fmt.Errorf("gitserver: git http-backend not found: %w", err)
	}
	handler := &cgi.Handler{
		Path: backend,
		Dir:  filepath.Join(s.dir, "repos"),
		Env: []string{
			"GIT_PROJECT_ROOT=" + filepath.Join(s.dir, "repos"),
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + s.home,
		},
	}
	pushHandler := *handler
	pushHandler.Env = append(append([]string{}, handler.Env...), "REMOTE_USER="+opts.PushUsername)
	var lc net.ListenConfig
	s.ln, err = lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		s.cleanup()
		return nil, fmt.Errorf("gitserver: listen: %w", err)
	}
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.requests.Add(1)
			if r.Header.Get("Authorization") == "" {
				s.anon.Add(1)
			}
			if opts.PushGate != nil && r.Method == http.MethodPost && isReceivePack(r) {
				opts.PushGate(r)
			}
			if opts.PushPassword != "" && isReceivePack(r) {
				if !basicAuth(w, r, opts.PushUsername, opts.PushPassword) {
					return
				}
				pushHandler.ServeHTTP(w, r)
				return
			}
			if !isReceivePack(r) && !s.mayRead(w, r) {
				return
			}
			handler.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if opts.TLS {
		if err := s.serveTLS(); err != nil {
			s.cleanup()
			return nil, err
		}
	}
	if opts.SSH {
		if err := s.startSSH(ctx); err != nil {
			_ = s.ln.Close()
			s.cleanup()
			return nil, err
		}
	}
	s.done = make(chan error, 1)
	go func() { s.done <- s.srv.Serve(s.ln) }()
	return s, nil
}

// basicAuth reports whether r carries the basic credentials user and
// password; when not, it answers 401.
func basicAuth(w http.ResponseWriter, r *http.Request, user, password string) bool {
	u, p, ok := r.BasicAuth()
	if ok && subtle.ConstantTimeCompare([]byte(u), []byte(user)) == 1 && subtle.ConstantTimeCompare([]byte(p), []byte(password)) == 1 {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="gitserver"`)
	http.Error(w, "authentication required", http.StatusUnauthorized)
	return false
}

// isReceivePack reports whether r is part of a push.
func isReceivePack(r *http.Request) bool {
	return r.URL.Query().Get("service") == "git-receive-pack" || strings.HasSuffix(r.URL.Path, "/git-receive-pack")
}

// URL returns the server's base URL ("http://127.0.0.1:PORT", https://
// with Options.TLS).
func (s *Server) URL() string {
	if s.tls {
		return "https://" + s.ln.Addr().String()
	}
	return "http://" + s.ln.Addr().String()
}

// CAPEM returns the PEM certificate clients must trust with Options.TLS.
func (s *Server) CAPEM() []byte { return s.caPEM }

// AnonymousRequests returns how many requests came without an
// Authorization header.
func (s *Server) AnonymousRequests() int64 { return s.anon.Load() }

// RepoURL returns the clone URL of a repository.
func (s *Server) RepoURL(name string) string { return s.URL() + "/" + name + ".git" }

// Branch returns the branch repositories are created with.
func (s *Server) Branch() string { return s.opts.Branch }

// Requests returns how many HTTP requests the server has received, so a
// test can count the fetches an engine makes.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Close stops the server, waits for it, and removes its folder when Start
// created it. Closing again returns the first Close's result, so a test
// that stops the server on purpose may leave a deferred Close in place.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := s.srv.Shutdown(ctx)
		if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
		if serr := s.closeSSH(); serr != nil && err == nil {
			err = serr
		}
		s.cleanup()
		s.closeErr = err
	})
	return s.closeErr
}

func (s *Server) cleanup() {
	if s.temp {
		_ = os.RemoveAll(s.dir)
	}
}
