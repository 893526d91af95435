package cloudfake

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"
)

// ARMScope is the scope of the Entra ID token an ACR exchanges.
const ARMScope = "https://management.core.windows.net/.default"

// ACRUser is the user name that goes with an ACR refresh token.
const ACRUser = "00000000-0000-0000-0000-000000000000"

// ACR is a fake Azure Container Registry: a real OCI registry
// (go-containerregistry's, in memory) served over HTTPS behind ACR's
// authentication: a Bearer challenge naming its token server; POST
// /oauth2/exchange trades an Entra ID token of Azure Resource Manager
// (issued by its Entra) for a refresh token (a JWT with an exp claim);
// GET /oauth2/token, with user ACRUser and a refresh token as basic
// credentials, gives the access token the registry API takes.
type ACR struct {
	// Host is "127.0.0.1:port".
	Host string
	// CAPEM is the certificate clients must trust.
	CAPEM []byte
	// RefreshValidity is the lifetime of the refresh tokens it issues.
	RefreshValidity atomic.Int64 // nanoseconds

	t         testing.TB
	entra     *Entra
	push      *registry.Client
	pushHost  string
	exchanges atomic.Int64
	pulls     atomic.Int64
	mu        sync.Mutex
	refresh   map[string]bool
	access    map[string]bool
}

// NewACR starts a fake registry whose exchange trusts entra; it stops with
// the test.
func NewACR(t testing.TB, entra *Entra) *ACR {
	t.Helper()
	a := &ACR{t: t, entra: entra, refresh: map[string]bool{}, access: map[string]bool{}}
	a.RefreshValidity.Store(int64(3 * time.Hour))
	inner := ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))
	// Charts are pushed through a plain listener of the same storage,
	// outside the authentication under test.
	back := httptest.NewServer(inner)
	t.Cleanup(back.Close)
	a.pushHost = strings.TrimPrefix(back.URL, "http://")
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.serve(w, r, inner) }))
	t.Cleanup(srv.Close)
	a.Host = strings.TrimPrefix(srv.URL, "https://")
	a.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")))
	if err != nil {
		t.Fatal(err)
	}
	a.push = c
	return a
}

func (a *ACR) serve(w http.ResponseWriter, r *http.Request, inner http.Handler) {
	switch r.URL.Path {
	case "/oauth2/exchange":
		a.exchange(w, r)
		return
	case "/oauth2/token":
		a.token(w, r)
		return
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	a.mu.Lock()
	ok := a.access[tok]
	a.mu.Unlock()
	if !ok {
		challenge := fmt.Sprintf(`Bearer realm="https://%s/oauth2/token",service="%s"`, a.Host, a.Host)
		if name, _, found := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/tags/"); found {
			challenge += fmt.Sprintf(`,scope="repository:%s:pull"`, name)
		} else if name, _, found := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/manifests/"); found {
			challenge += fmt.Sprintf(`,scope="repository:%s:pull"`, name)
		}
		w.Header().Set("Www-Authenticate", challenge)
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
		return
	}
	if strings.Contains(r.URL.Path, "/manifests/") && r.Method == http.MethodGet {
		a.pulls.Add(1)
	}
	inner.ServeHTTP(w, r)
}

// exchange trades an ARM token for a refresh token.
func (a *ACR) exchange(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil || r.PostForm.Get("grant_type") != "access_token" ||
		r.PostForm.Get("service") != a.Host || a.entra.Scope(r.PostForm.Get("access_token")) != ARMScope {
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
		return
	}
	n := a.exchanges.Add(1)
	exp := time.Now().Add(time.Duration(a.RefreshValidity.Load())).Unix()
	claims, _ := json.Marshal(map[string]any{"exp": exp, "n": n})
	enc := base64.RawURLEncoding
	tok := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc.EncodeToString(claims) + "." + enc.EncodeToString([]byte("sig"))
	a.mu.Lock()
	a.refresh[tok] = true
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"refresh_token": tok})
}

// token gives an access token for a refresh token (basic credentials, or
// the refresh_token grant).
func (a *ACR) token(w http.ResponseWriter, r *http.Request) {
	user, refresh, ok := r.BasicAuth()
	if r.Method == http.MethodPost && r.ParseForm() == nil && r.PostForm.Get("grant_type") == "refresh_token" {
		user, refresh, ok = ACRUser, r.PostForm.Get("refresh_token"), true
	} else if r.Method == http.MethodPost && r.ParseForm() == nil && r.PostForm.Get("grant_type") == "password" {
		user, refresh, ok = r.PostForm.Get("username"), r.PostForm.Get("password"), true
	}
	a.mu.Lock()
	valid := ok && user == ACRUser && a.refresh[refresh]
	var access string
	if valid {
		access = fmt.Sprintf("acr-access-%d", len(a.access)+1)
		a.access[access] = true
	}
	a.mu.Unlock()
	if !valid {
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"token": access, "access_token": access, "expires_in": 3600})
}

// PushChart packages the chart folder dir and pushes it to
// Host/path/name:version.
func (a *ACR) PushChart(path, dir string) {
	a.t.Helper()
	c, err := loader.LoadDir(dir)
	if err != nil {
		a.t.Fatal(err)
	}
	archive, err := chartutil.Save(c, a.t.TempDir())
	if err != nil {
		a.t.Fatal(err)
	}
	data, err := readFile(archive)
	if err != nil {
		a.t.Fatal(err)
	}
	ref := fmt.Sprintf("%s/%s/%s:%s", a.pushHost, path, c.Metadata.Name, c.Metadata.Version)
	if _, err := a.push.Push(data, ref); err != nil {
		a.t.Fatal(err)
	}
}

// Exchanges returns how many refresh tokens it has issued.
func (a *ACR) Exchanges() int64 { return a.exchanges.Load() }

// Pulls returns how many manifests were read through the authenticated
// front.
func (a *ACR) Pulls() int64 { return a.pulls.Load() }
