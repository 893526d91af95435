package webhook

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"testing"
)

func ioNopCloser(r io.Reader) io.ReadCloser { return io.NopCloser(r) }

// FuzzWebhook feeds arbitrary bodies, correctly signed, through the whole
// Handler for every provider: it must answer 200, 202 or 400 (never 500,
// never panic), and every hint it emits must be well-formed.
func FuzzWebhook(f *testing.F) {
	for _, seed := range []struct {
		provider Provider
		event    string
		file     string
	}{
		{GitHub, "push", "github_push.json"}, {GitHub, "ping", "github_ping.json"},
		{GitLab, "Push Hook", "gitlab_push.json"}, {Gitea, "push", "gitea_push.json"},
		{Gogs, "push", "gogs_push.json"}, {Bitbucket, "repo:push", "bitbucket_push.json"},
		{BitbucketServer, "repo:refs_changed", "bitbucket_server_refs_changed.json"},
	} {
		f.Add(string(seed.provider), seed.event, fixture(f, seed.file))
	}
	f.Add("github", "push", []byte(`{"ref":"","commits":[{"added":[null,"..","a//b","/"]}]}`))
	f.Add("bitbucket", "repo:push", []byte(`{"push":{"changes":[{"new":null,"old":null}]},"repository":{"full_name":"a/b"}}`))
	f.Fuzz(func(t *testing.T, provider, event string, body []byte) {
		var rec recorder
		h := newTestHandler(&rec)
		req := signedRequest(Provider(provider), event, body, secret)
		if provider == string(GitHub) || provider == string(Gitea) {
			// Exercise detection with whatever event name came in.
			req.Header.Set("X-GitHub-Event", event)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusUnauthorized:
		default:
			t.Fatalf("status %d for provider %q event %q", w.Code, provider, event)
		}
		if w.Code != http.StatusOK && len(rec.hints) > 0 {
			t.Fatalf("status %d but %d hints", w.Code, len(rec.hints))
		}
		if bytes.Contains(w.Body.Bytes(), body) && len(body) > 8 {
			t.Fatalf("response echoes the body")
		}
		for _, hint := range rec.hints {
			if len(hint.RepositoryURLs) == 0 || hint.Ref == "" {
				t.Fatalf("hint without repository or ref: %+v", hint)
			}
			for _, p := range hint.ChangedPaths {
				if !fs.ValidPath(p) || p == "." {
					t.Fatalf("hint carries an unclean path %q", p)
				}
			}
		}
		// The parser alone must not panic on any provider either.
		_, _ = Parse(Provider(provider), event, body)
	})
}
