package git

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr/funcr"

	"github.com/kubegitops/gitops/source"
)

const (
	testUser   = "alice"
	testSecret = "tok-S3CRET-4242-zz"
)

func TestBasicAuth(t *testing.T) {
	srv := newGitServer(t, testUser, testSecret)
	w := newWorkRepo(t, srv.root, "private")
	w.write(map[string]string{"a.yaml": "kind: A\n"})
	commit := w.commit("one")
	w.publish()
	ctx := context.Background()
	s := newSource(t)

	_, err := s.Resolve(ctx, source.Repository{URL: srv.url("private")}, "main")
	if !errors.Is(err, source.ErrAuthentication) {
		t.Fatalf("anonymous resolve: error = %v, want ErrAuthentication", err)
	}
	repo := source.Repository{URL: srv.url("private"), Credentials: &source.Credentials{Username: testUser, Password: testSecret}}
	rev, err := s.Resolve(ctx, repo, "main")
	if err != nil || rev.Commit != commit {
		t.Fatalf("resolve with credentials = %v, %v", rev, err)
	}
	snap, err := s.Snapshot(ctx, repo, rev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.TreeHash("a.yaml"); err != nil {
		t.Fatal(err)
	}
	// Credentials written into the URL work too, and never show.
	inURL := source.Repository{URL: strings.Replace(srv.url("private"), "http://", "http://"+testUser+":"+testSecret+"@", 1)}
	if rev, err := s.Resolve(ctx, inURL, "main"); err != nil || rev.Commit != commit {
		t.Fatalf("resolve with credentials in the URL = %v, %v", rev, err)
	}
	if strings.Contains(inURL.String(), testSecret) || strings.Contains(fmt.Sprintf("%v %+v %#v", inURL, inURL, inURL), testSecret) {
		t.Fatal("Repository prints the password of its URL")
	}
}

func TestBearerToken(t *testing.T) {
	srv := newGitServer(t, "", "")
	var sawBearer atomic.Int64
	inner := srv.srv.Config.Handler
	srv.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testSecret {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		sawBearer.Add(1)
		inner.ServeHTTP(w, r)
	})
	w := newWorkRepo(t, srv.root, "bearer")
	commit := w.commit("one")
	w.publish()
	s := newSource(t)
	repo := source.Repository{URL: srv.url("bearer"), Credentials: &source.Credentials{BearerToken: testSecret}}
	rev, err := s.Resolve(context.Background(), repo, "main")
	if err != nil || rev.Commit != commit || sawBearer.Load() == 0 {
		t.Fatalf("bearer resolve = %v, %v (bearer requests %d)", rev, err, sawBearer.Load())
	}
}

// TestCredentialsNeverFollowRedirectToOtherOrigin: the repository answers
// with a redirect to another origin (another port on loopback); the
// credentials stay behind.
func TestCredentialsNeverFollowRedirectToOtherOrigin(t *testing.T) {
	target := newGitServer(t, "", "")
	w := newWorkRepo(t, target.root, "moved")
	commit := w.commit("one")
	w.publish()
	var originAuth atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			originAuth.Add(1)
		}
		http.Redirect(rw, r, target.srv.URL+strings.Replace(r.URL.RequestURI(), "/old", "/moved", 1), http.StatusFound)
	}))
	defer origin.Close()
	s := newSource(t)
	repo := source.Repository{URL: origin.URL + "/old.git", Credentials: &source.Credentials{Username: testUser, Password: testSecret}}
	rev, err := s.Resolve(context.Background(), repo, "main")
	if err != nil || rev.Commit != commit {
		t.Fatalf("resolve through redirect = %v, %v", rev, err)
	}
	if _, err := s.Snapshot(context.Background(), repo, rev); err != nil {
		t.Fatalf("snapshot through redirect: %v", err)
	}
	if originAuth.Load() == 0 {
		t.Fatal("the origin itself never received the credentials")
	}
	if n := target.sawAuth.Load(); n != 0 {
		t.Fatalf("the redirect target received credentials %d times", n)
	}
}

// TestCredentialsBoundToScope: credentials scoped to one origin are not
// sent to a repository on another origin.
func TestCredentialsBoundToScope(t *testing.T) {
	srv := newGitServer(t, "", "")
	w := newWorkRepo(t, srv.root, "public")
	w.commit("one")
	w.publish()
	s := newSource(t)
	repo := source.Repository{URL: srv.url("public"), Credentials: &source.Credentials{
		Username: testUser, Password: testSecret, Scope: "http://127.0.0.1:1/",
	}}
	if _, err := s.Resolve(context.Background(), repo, "main"); err != nil {
		t.Fatal(err)
	}
	if n := srv.sawAuth.Load(); n != 0 {
		t.Fatalf("out-of-scope server received credentials %d times", n)
	}
}

// TestNoCredentialInErrorsOrLogs forces failures with credentials in the
// URL and in Credentials (unreachable host, unknown host, 401, a server
// that echoes the Authorization header into an error page, a bad SSH key)
// and greps every error and log line for the secret (user-asks S10).
func TestNoCredentialInErrorsOrLogs(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "rate limited; you sent "+r.Header.Get("Authorization")+" "+r.URL.String(), http.StatusTooManyRequests)
	}))
	defer echo.Close()
	denied := newGitServer(t, testUser, "another-password")
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	var mu sync.Mutex
	var logs strings.Builder
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		logs.WriteString(prefix + " " + args + "\n")
		mu.Unlock()
	}, funcr.Options{Verbosity: 10})
	s := newSource(t, func(o *Options) { o.Logger = logger; o.Timeout = 5e9 })
	creds := &source.Credentials{Username: testUser, Password: testSecret}
	withUser := func(u string) string { return strings.Replace(u, "://", "://"+testUser+":"+testSecret+"@", 1) }
	repos := []source.Repository{
		{URL: withUser(closedURL) + "/r.git"},
		{URL: closedURL + "/r.git", Credentials: creds},
		{URL: withUser("http://host.invalid") + "/r.git"},
		{URL: withUser(denied.url("r"))},
		{URL: denied.url("r"), Credentials: creds},
		{URL: withUser(echo.URL) + "/r.git"},
		{URL: echo.URL + "/r.git", Credentials: &source.Credentials{BearerToken: testSecret}},
		{URL: "ssh://git@127.0.0.1:1/r.git", Credentials: &source.Credentials{SSHPrivateKey: []byte("-----BEGIN " + testSecret), SSHPassphrase: testSecret}},
		{URL: "git@127.0.0.1:r.git", Credentials: &source.Credentials{SSHPassphrase: testSecret}},
		{URL: "https://" + testUser + ":" + testSecret + "%zz@127.0.0.1:1/r.git"},
		{URL: "https://" + testUser + ":" + testSecret + " x@127.0.0.1:1/r.git"},
		{URL: "ftp://" + testUser + ":" + testSecret + "@127.0.0.1/r.git"},
	}
	for _, repo := range repos {
		_, rerr := s.Resolve(context.Background(), repo, "main")
		_, serr := s.Snapshot(context.Background(), repo, source.Revision{Commit: strings.Repeat("a", 40)})
		t.Logf("%s: resolve: %v; snapshot: %v", repo, rerr, serr)
		for _, err := range []error{rerr, serr} {
			if err == nil {
				t.Errorf("%s: expected a failure", repo)
				continue
			}
			msg := fmt.Sprintf("%v | %+v | %#v", err, err, err)
			if strings.Contains(msg, testSecret) {
				t.Errorf("error leaks the secret: %s", msg)
			}
			if strings.Contains(msg, "rate limited") {
				t.Errorf("error echoes the server's response body: %s", msg)
			}
		}
		for _, v := range []any{repo, &repo, repo.Credentials} {
			out := fmt.Sprintf("%v %+v %#v %s %d %x", v, v, v, v, v, v)
			js, _ := json.Marshal(v)
			if strings.Contains(out+string(js), testSecret) {
				t.Errorf("printing or marshalling %T leaks the secret: %s %s", v, out, js)
			}
		}
	}
	if strings.Contains(logs.String(), testSecret) {
		t.Errorf("logs leak the secret:\n%s", logs.String())
	}
}
