package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

const secret = "webhook-secret-1"

func sign(body []byte, key string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// signedRequest builds a request as provider would send it, signed with key.
func signedRequest(p Provider, event string, body []byte, key string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/hooks", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	switch p {
	case GitHub:
		r.Header.Set("X-GitHub-Event", event)
		r.Header.Set("X-Hub-Signature-256", "sha256="+sign(body, key))
	case Gitea:
		r.Header.Set("X-GitHub-Event", event) // Gitea sends both
		r.Header.Set("X-Gitea-Event", event)
		r.Header.Set("X-Gitea-Signature", sign(body, key))
	case Gogs:
		r.Header.Set("X-Gogs-Event", event)
		r.Header.Set("X-Gogs-Signature", sign(body, key))
	case GitLab:
		r.Header.Set("X-Gitlab-Event", event)
		r.Header.Set("X-Gitlab-Token", key)
	case Bitbucket, BitbucketServer:
		r.Header.Set("X-Event-Key", event)
		r.Header.Set("X-Hub-Signature", "sha256="+sign(body, key))
	}
	return r
}

type recorder struct {
	mu    sync.Mutex
	hints []Hint
}

func (r *recorder) onPush(_ context.Context, h Hint) {
	r.mu.Lock()
	r.hints = append(r.hints, h)
	r.mu.Unlock()
}

func newTestHandler(rec *recorder) *Handler {
	secrets := map[Provider][]string{}
	for _, p := range []Provider{GitHub, GitLab, Gitea, Gogs, Bitbucket, BitbucketServer} {
		secrets[p] = []string{"old-secret", secret}
	}
	return NewHandler(Options{Secrets: secrets, OnPush: rec.onPush})
}

func TestProviderFixtures(t *testing.T) {
	cases := []struct {
		provider Provider
		event    string
		file     string
		want     []Hint
	}{
		{GitHub, "push", "github_push.json", []Hint{{
			Provider:       GitHub,
			RepositoryURLs: []string{"https://github.com/baxterthehacker/public-repo", "https://github.com/baxterthehacker/public-repo.git", "git@github.com:baxterthehacker/public-repo.git"},
			Ref:            "refs/heads/main", Revision: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
			ChangedPaths:  []string{"README.md", "abs/ok.yaml", "apps/guestbook/values.yaml", "apps/new/deploy.yaml", "apps/old/deploy.yaml"},
			PathsComplete: true,
		}}},
		{GitLab, "Push Hook", "gitlab_push.json", []Hint{{
			Provider:       GitLab,
			RepositoryURLs: []string{"http://example.com/mike/diaspora", "http://example.com/mike/diaspora.git", "git@example.com:mike/diaspora.git"},
			Ref:            "refs/heads/master", Revision: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
			ChangedPaths: []string{"CHANGELOG", "app/controller/application.rb"}, PathsComplete: true,
		}}},
		{Gitea, "push", "gitea_push.json", []Hint{{
			Provider:       Gitea,
			RepositoryURLs: []string{"http://localhost:3000/gitea/webhooks", "http://localhost:3000/gitea/webhooks.git", "ssh://gitea@localhost:2222/gitea/webhooks.git"},
			Ref:            "refs/heads/develop", Revision: "bffeb74224043ba2feb48d137756c8a9331c449a",
			ChangedPaths: []string{"charts/app/Chart.yaml", "charts/app/values.yaml"}, PathsComplete: true,
		}}},
		{Gogs, "push", "gogs_push.json", []Hint{{
			Provider:       Gogs,
			RepositoryURLs: []string{"https://try.gogs.io/unknwon/app", "https://try.gogs.io/unknwon/app.git", "git@try.gogs.io:unknwon/app.git"},
			Ref:            "refs/tags/v1.2.0", Revision: "4d2c6d4d3b4a9a2e4e1a0b8c7f6e5d4c3b2a1f0e",
		}}},
		{Bitbucket, "repo:push", "bitbucket_push.json", []Hint{
			{Provider: Bitbucket, RepositoryURLs: []string{"https://bitbucket.org/team/app"}, Ref: "refs/heads/main", Revision: "709d658dc5b6d6afcd46049c2f332ee3f515a67d"},
			{Provider: Bitbucket, RepositoryURLs: []string{"https://bitbucket.org/team/app"}, Ref: "refs/tags/v0.9"},
		}},
		{BitbucketServer, "repo:refs_changed", "bitbucket_server_refs_changed.json", []Hint{{
			Provider:       BitbucketServer,
			RepositoryURLs: []string{"ssh://git@bitbucket.example.com:7999/prj/app.git", "https://bitbucket.example.com/scm/prj/app.git", "https://bitbucket.example.com/projects/PRJ/repos/app/browse"},
			Ref:            "refs/heads/master", Revision: "178864a7d521b6f5e720b386b2c2b0ef8563e0dc",
		}}},
	}
	for _, c := range cases {
		t.Run(string(c.provider), func(t *testing.T) {
			body := fixture(t, c.file)
			var rec recorder
			h := newTestHandler(&rec)

			w := httptest.NewRecorder()
			h.ServeHTTP(w, signedRequest(c.provider, c.event, body, secret))
			if w.Code != http.StatusOK {
				t.Fatalf("good signature: status %d: %s", w.Code, w.Body)
			}
			if !reflect.DeepEqual(rec.hints, c.want) {
				t.Fatalf("hints:\n got %+v\nwant %+v", rec.hints, c.want)
			}
			// A wrong secret, a tampered body and a missing signature are refused.
			rec.hints = nil
			tampered := append(bytes.Clone(body), ' ')
			refused := map[string]*http.Request{
				"wrong secret": signedRequest(c.provider, c.event, body, "not-the-secret"),
				"unsigned":     unsigned(signedRequest(c.provider, c.event, body, secret)),
			}
			if c.provider != GitLab { // GitLab sends a token, not a signature of the body
				refused["tampered"] = withBody(signedRequest(c.provider, c.event, body, secret), tampered)
			}
			for name, req := range refused {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusUnauthorized {
					t.Errorf("%s: status %d, want 401", name, w.Code)
				}
				if strings.Contains(w.Body.String(), "refs/") {
					t.Errorf("%s: response echoes the payload: %s", name, w.Body)
				}
			}
			if len(rec.hints) != 0 {
				t.Fatalf("a refused request produced hints: %+v", rec.hints)
			}
		})
	}
}

func withBody(r *http.Request, body []byte) *http.Request {
	r.Body = ioNopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return r
}

func unsigned(r *http.Request) *http.Request {
	for _, h := range []string{"X-Hub-Signature-256", "X-Hub-Signature", "X-Gitea-Signature", "X-Gogs-Signature", "X-Gitlab-Token"} {
		r.Header.Del(h)
	}
	return r
}

func TestRejections(t *testing.T) {
	var rec recorder
	h := newTestHandler(&rec)
	push := fixture(t, "github_push.json")

	status := func(r *http.Request) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	get := httptest.NewRequest(http.MethodGet, "/hooks", nil)
	if got := status(get); got != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", got)
	}
	noProvider := httptest.NewRequest(http.MethodPost, "/hooks", bytes.NewReader(push))
	if got := status(noProvider); got != http.StatusBadRequest {
		t.Errorf("no provider header: %d, want 400", got)
	}
	for name, body := range map[string][]byte{
		"not json":      []byte("{not json"),
		"array":         []byte("[1,2]"),
		"no repository": []byte(`{"ref":"refs/heads/main","after":"x"}`),
		"wrong types":   []byte(`{"ref":5,"repository":{"html_url":[]}}`),
		"empty":         nil,
	} {
		if got := status(signedRequest(GitHub, "push", body, secret)); got != http.StatusBadRequest {
			t.Errorf("%s with a valid signature: %d, want 400", name, got)
		}
	}
	if got := status(signedRequest(GitHub, "ping", fixture(t, "github_ping.json"), secret)); got != http.StatusAccepted {
		t.Errorf("ping: %d, want 202", got)
	}
	// A provider with no secret configured is refused even when signed
	// with an empty key.
	bare := NewHandler(Options{OnPush: rec.onPush})
	w := httptest.NewRecorder()
	bare.ServeHTTP(w, signedRequest(GitHub, "push", push, ""))
	if w.Code != http.StatusUnauthorized {
		t.Errorf("no secret configured: %d, want 401", w.Code)
	}
	if len(rec.hints) != 0 {
		t.Fatalf("rejected requests produced hints: %+v", rec.hints)
	}
}

// TestBodyCap sends a body over the cap through a real HTTP server.
func TestBodyCap(t *testing.T) {
	var rec recorder
	h := NewHandler(Options{Secrets: map[Provider][]string{GitHub: {secret}}, OnPush: rec.onPush, MaxBodyBytes: 4096})
	srv := httptest.NewServer(h)
	defer srv.Close()
	big := []byte(fmt.Sprintf(`{"ref":"refs/heads/main","repository":{"html_url":"https://h/r"},"pad":"%s"}`, strings.Repeat("x", 8192)))
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(big))
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", "sha256="+sign(big, secret))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge || len(rec.hints) != 0 {
		t.Fatalf("oversized body: status %d, hints %v; want 413 and none", res.StatusCode, rec.hints)
	}
	if DefaultOptions().MaxBodyBytes != 1<<20 {
		t.Fatalf("default cap = %d, want 1 MiB", DefaultOptions().MaxBodyBytes)
	}
}

func TestPathsIncompleteWhenHostCutsTheList(t *testing.T) {
	var commits []string
	for i := range 20 {
		commits = append(commits, fmt.Sprintf(`{"added":["f%d"]}`, i))
	}
	body := []byte(`{"ref":"refs/heads/main","after":"abc","repository":{"html_url":"https://github.com/o/r"},"commits":[` + strings.Join(commits, ",") + `]}`)
	hints, err := Parse(GitHub, "push", body)
	if err != nil || len(hints) != 1 || hints[0].PathsComplete || len(hints[0].ChangedPaths) != 20 {
		t.Fatalf("20-commit push: %+v, %v; want 20 paths marked incomplete", hints, err)
	}
	gl := []byte(`{"object_kind":"push","ref":"refs/heads/main","after":"abc","project":{"web_url":"https://gl/o/r"},"commits":[{"added":["a"]}],"total_commits_count":40}`)
	hints, err = Parse(GitLab, "Push Hook", gl)
	if err != nil || hints[0].PathsComplete {
		t.Fatalf("gitlab push listing 1 of 40 commits: %+v, %v; want incomplete", hints, err)
	}
	del := []byte(`{"ref":"refs/heads/gone","after":"0000000000000000000000000000000000000000","deleted":true,"repository":{"html_url":"https://github.com/o/r"}}`)
	hints, err = Parse(GitHub, "push", del)
	if err != nil || hints[0].Revision != "" {
		t.Fatalf("branch deletion: %+v, %v; want an empty revision", hints, err)
	}
}
