package repocreds

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/helmrepo"
)

// FakeGitHub is a local fake of GitHub's installation token endpoint: it
// verifies the app's RS256 JWT with the app's public key and hands out
// numbered tokens valid for an hour.
type fakeGitHub struct {
	srv      *httptest.Server
	issued   atomic.Int64
	lastIss  atomic.Value
	fail     atomic.Bool
	validFor time.Duration
}

func newFakeGitHub(t *testing.T, pub *rsa.PublicKey, now func() time.Time) *fakeGitHub {
	f := &fakeGitHub{validFor: time.Hour}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/app/installations/42/access_tokens" || f.fail.Load() {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		parts := strings.Split(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), ".")
		if len(parts) != 3 {
			http.Error(w, "no jwt", http.StatusUnauthorized)
			return
		}
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var claims struct {
			Iss      string `json:"iss"`
			Iat, Exp int64
		}
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		_ = json.Unmarshal(payload, &claims)
		if claims.Exp-claims.Iat > 600 || claims.Iss != "7" {
			http.Error(w, "bad claims", http.StatusUnauthorized)
			return
		}
		n := f.issued.Add(1)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"token":"ghs_TOKEN%d","expires_at":%q}`, n, now().Add(f.validFor).UTC().Format(time.RFC3339))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func appKey(t *testing.T) (*rsa.PrivateKey, string) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
}

func TestGitHubAppMintsAndRefreshesTokens(t *testing.T) {
	key, keyPEM := appKey(t)
	var mu sync.Mutex
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	gh := newFakeGitHub(t, &key.PublicKey, now)
	app, err := newGitHubApp("argocd/app", 7, 42, keyPEM, gh.srv.URL+"/", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	app.now = now
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if tok, err := app.Token(ctx); err != nil || tok != "ghs_TOKEN1" {
				t.Errorf("token %q, %v", tok, err)
			}
		})
	}
	wg.Wait()
	if n := gh.issued.Load(); n != 1 {
		t.Fatalf("%d tokens minted for 10 concurrent callers, want 1", n)
	}
	mu.Lock()
	clock = clock.Add(54 * time.Minute) // 6 minutes left: still good
	mu.Unlock()
	if tok, _ := app.Token(ctx); tok != "ghs_TOKEN1" || gh.issued.Load() != 1 {
		t.Fatalf("token %q with 6 minutes left, %d minted", tok, gh.issued.Load())
	}
	mu.Lock()
	clock = clock.Add(2 * time.Minute) // 4 minutes left: refresh
	mu.Unlock()
	if tok, err := app.Token(ctx); tok != "ghs_TOKEN2" || err != nil {
		t.Fatalf("token near expiry: %q %v", tok, err)
	}
	gh.fail.Store(true)
	mu.Lock()
	clock = clock.Add(2 * time.Hour)
	mu.Unlock()
	_, err = app.Token(ctx)
	if !errors.Is(err, source.ErrAuthentication) || strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Fatalf("refused mint: %v", err)
	}
	printed := fmt.Sprintf("%v %+v %#v %s", app, app, app, app)
	js, _ := json.Marshal(app)
	if strings.Contains(printed+string(js), "ghs_") || strings.Contains(printed+string(js), "PRIVATE") {
		t.Fatalf("GitHubApp prints secrets: %s %s", printed, js)
	}
}

func TestGitHubAppSecretsAreValidated(t *testing.T) {
	_, keyPEM := appKey(t)
	for _, c := range []struct {
		inst      int64
		key, want string
	}{{0, keyPEM, `"githubAppInstallationID": required`}, {1, "SECRET", `"githubAppPrivateKey": not a PEM key`}} {
		_, err := newGitHubApp("argocd/s", 1, c.inst, c.key, "", time.Second)
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%v: %v", c.want, err)
		}
	}
}

// A repo-creds Secret of a GitHub App: the Store mints an installation
// token at the fake GitHub and a real repository (basic auth,
// x-access-token and the token) is read with it.
func TestGitHubAppCredentialsReadARepository(t *testing.T) {
	key, keyPEM := appKey(t)
	gh := newFakeGitHub(t, &key.PublicKey, time.Now)
	repo := chartserver.New(t, chartserver.Options{Username: "x-access-token", Password: "ghs_TOKEN1"})
	repo.Add(chartserver.WebChart(t, "web", "1.0.0"))
	secret := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: gh-app, namespace: argocd, labels: {argocd.argoproj.io/secret-type: repo-creds}}
stringData:
  url: %s
  githubAppID: "7"
  githubAppInstallationID: "42"
  githubAppEnterpriseBaseUrl: %s
  githubAppPrivateKey: |
%s`, repo.URL, gh.srv.URL, indentLines(keyPEM, "    "))
	store, err := Load("repos.yaml", []byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	opts := helmrepo.DefaultOptions()
	opts.CacheDir = t.TempDir()
	charts, err := helmrepo.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		creds := store.For(repo.URL)
		if creds == nil {
			t.Fatalf("no credentials: %v", store.LastError())
		}
		rev, err := charts.Resolve(context.Background(), source.Repository{URL: repo.URL, Chart: "web", Credentials: creds}, "1.x")
		if err != nil || rev.Commit != "1.0.0" {
			t.Fatalf("resolve with the app's token: %v %v", rev, err)
		}
	}
	if n := gh.issued.Load(); n != 1 {
		t.Errorf("%d tokens minted for three uses within the token's life, want 1", n)
	}
	if s := fmt.Sprintf("%v %+v", store, store.For(repo.URL)); strings.Contains(s, "ghs_") {
		t.Errorf("store prints the token: %s", s)
	}
	gh.fail.Store(true)
	store2, _ := Load("repos.yaml", []byte(secret))
	// A refused mint: the credentials carry the error, and the source
	// refuses with it rather than reading anonymously.
	c := store2.For(repo.URL)
	if c == nil || !errors.Is(c.Err, source.ErrAuthentication) || !errors.Is(store2.LastError(), source.ErrAuthentication) {
		t.Fatalf("a refused mint: credentials %v, last error %v", c, store2.LastError())
	}
	if _, err := charts.Resolve(context.Background(), source.Repository{URL: repo.URL, Chart: "web", Credentials: c}, "1.x"); !errors.Is(err, source.ErrAuthentication) {
		t.Errorf("resolve with a refused mint: %v, want the mint's error", err)
	}
}

func indentLines(s, pad string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return pad + strings.Join(lines, "\n"+pad) + "\n"
}
