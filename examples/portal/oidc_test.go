package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	gosync "sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// testIssuer is a small OpenID Connect issuer on loopback: discovery,
// JWKS, an authorize endpoint that logs in one fixed user at once, and a
// token endpoint that checks the PKCE verifier and signs an ID token.
type testIssuer struct {
	*httptest.Server
	key    *rsa.PrivateKey
	groups []string
	// badNonce makes the ID token carry another nonce.
	badNonce bool

	mu    gosync.Mutex
	codes map[string]issuedCode
}

type issuedCode struct{ nonce, challenge, clientID string }

func newTestIssuer(t *testing.T, groups ...string) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &testIssuer{key: key, groups: groups, codes: map[string]issuedCode{}}
	m := http.NewServeMux()
	m.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"issuer": is.URL, "authorization_endpoint": is.URL + "/authorize",
			"token_endpoint": is.URL + "/token", "jwks_uri": is.URL + "/jwks", "response_types_supported": []string{"code"},
			"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	m.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	m.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" {
			http.Error(w, "PKCE S256 required", 400)
			return
		}
		code := rand.Text()
		is.mu.Lock()
		is.codes[code] = issuedCode{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), clientID: q.Get("client_id")}
		is.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	m.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		is.mu.Lock()
		c, ok := is.codes[r.PostForm.Get("code")]
		delete(is.codes, r.PostForm.Get("code"))
		is.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		nonce := c.nonce
		if is.badNonce {
			nonce = "another"
		}
		claims, _ := json.Marshal(map[string]any{"iss": is.URL, "sub": "u-42", "aud": c.clientID, "email": "erin@example.com",
			"groups": is.groups, "nonce": nonce, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()})
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		obj, err := signer.Sign(claims)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		raw, _ := obj.CompactSerialize()
		writeJSON(w, 200, map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "id_token": raw})
	})
	is.Server = httptest.NewServer(m)
	t.Cleanup(is.Close)
	return is
}

// TestOIDCLogin logs in through an in-process issuer: the groups of the ID
// token give the role; a wrong nonce or a callback from another browser
// is refused.
func TestOIDCLogin(t *testing.T) {
	is := newTestIssuer(t, "readers-a", "staff")
	pol, err := loadPolicyText(fixturePolicy)
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewUnstartedServer(nil)
	portalURL := "http://" + ps.Listener.Addr().String()
	o, err := newOIDCLogin(context.Background(), oidcOptions{Issuer: is.URL, ClientID: "portal", RedirectURL: portalURL + "/oidc/callback"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(serverOptions{Policy: pol, OIDC: o, Tokens: tokenFile{}})
	if err != nil {
		t.Fatal(err)
	}
	ps.Config.Handler = srv
	ps.Start()
	defer ps.Close()

	login := func() (*http.Client, *http.Response) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
		resp, err := c.Get(portalURL + "/login/oidc")
		if err != nil {
			t.Fatal(err)
		}
		return c, resp
	}
	c, resp := login()
	resp.Body.Close()
	if resp.Request.URL.Path != "/" && resp.Request.URL.Path != "/login" {
		t.Fatalf("after login at %s (%d)", resp.Request.URL, resp.StatusCode)
	}
	sresp, err := c.Get(portalURL + "/api/v1/session")
	if err != nil {
		t.Fatal(err)
	}
	var sess struct {
		User, Role, Via string
		Groups          []string
	}
	decodeJSON(t, sresp, &sess)
	if sess.User != "erin@example.com" || sess.Role != "readonly" || sess.Via != "oidc" || len(sess.Groups) != 2 {
		t.Fatalf("session %+v, want erin, readonly (readers-a) by oidc", sess)
	}

	// A wrong nonce is refused and makes no session.
	is.badNonce = true
	c2, resp := login()
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("bad nonce: %d, want 401", resp.StatusCode)
	}
	if r, _ := c2.Get(portalURL + "/api/v1/session"); r == nil || r.StatusCode != http.StatusUnauthorized {
		t.Errorf("a refused login made a session")
	}
	is.badNonce = false

	// A callback carrying a state this browser did not start is refused.
	noRedirect := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r1, err := noRedirect.Get(portalURL + "/login/oidc")
	if err != nil {
		t.Fatal(err)
	}
	r1.Body.Close()
	r2, err := noRedirect.Get(r1.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	r3, err := noRedirect.Get(r2.Header.Get("Location")) // no state cookie: another browser
	if err != nil {
		t.Fatal(err)
	}
	r3.Body.Close()
	if r3.StatusCode != http.StatusUnauthorized {
		t.Errorf("callback without the state cookie: %d, want 401", r3.StatusCode)
	}
}
