package cloudfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Entra is a fake of Microsoft Entra ID's token endpoint
// (POST /{tenant}/oauth2/v2.0/token, client credentials).
type Entra struct {
	// URL is the authority host ("http://127.0.0.1:port/").
	URL string
	// TenantID and ClientID are the application it knows.
	TenantID, ClientID string
	// ExpiresIn is the lifetime of the tokens it issues, in seconds.
	ExpiresIn atomic.Int64

	mu        sync.Mutex
	assertion string            // the federated token it accepts
	secret    string            // the client secret it accepts
	issued    map[string]string // token -> scope
	count     atomic.Int64
}

// NewEntra starts a fake that accepts client tenant/client with the
// federated token assertion (workload identity) or the client secret
// (service principal); it stops with the test.
func NewEntra(t testing.TB, tenant, client, assertion, secret string) *Entra {
	t.Helper()
	e := &Entra{TenantID: tenant, ClientID: client, assertion: assertion, secret: secret, issued: map[string]string{}}
	e.ExpiresIn.Store(3600)
	srv := httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(srv.Close)
	e.URL = srv.URL + "/"
	return e
}

func (e *Entra) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/"+e.TenantID+"/oauth2/v2.0/token" || r.ParseForm() != nil {
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		return
	}
	f := r.PostForm
	e.mu.Lock()
	assertion, secret := e.assertion, e.secret
	e.mu.Unlock()
	ok := f.Get("grant_type") == "client_credentials" && f.Get("client_id") == e.ClientID && f.Get("scope") != "" &&
		((assertion != "" && f.Get("client_assertion") == assertion &&
			f.Get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer") ||
			(secret != "" && f.Get("client_secret") == secret))
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"invalid_client"}`)
		return
	}
	n := e.count.Add(1)
	tok := fmt.Sprintf("entra-token-%d", n)
	e.mu.Lock()
	e.issued[tok] = f.Get("scope")
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"token_type": "Bearer", "expires_in": e.ExpiresIn.Load(), "access_token": tok})
}

// SetAssertion changes the federated token it accepts (the kubelet
// rotated it).
func (e *Entra) SetAssertion(a string) {
	e.mu.Lock()
	e.assertion = a
	e.mu.Unlock()
}

// Scope returns the scope token was issued for, "" for a token it did not
// issue.
func (e *Entra) Scope(token string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.issued[token]
}

// Issued returns how many tokens it has issued.
func (e *Entra) Issued() int64 { return e.count.Load() }

// BearerScope returns the scope of the bearer token of r, "" when r has
// none it issued.
func (e *Entra) BearerScope(r *http.Request) string {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return e.Scope(tok)
}
