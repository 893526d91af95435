package cloudfake

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// Google is a fake of Google's OAuth token endpoint for one service
// account: it takes the JWT bearer grant, checks the assertion's RS256
// signature with the account's public key and its claims, and issues
// access tokens.
type Google struct {
	// URL is the token endpoint (the key's token_uri).
	URL string
	// Email is the service account's client_email.
	Email string
	// KeyJSON is the service account key file (gcpServiceAccountKey).
	KeyJSON string

	pub    *rsa.PublicKey
	issued atomic.Int64
}

// NewGoogle starts a fake with a new service account key; it stops with
// the test.
func NewGoogle(t testing.TB, email string) *Google {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := &Google{Email: email, pub: &key.PublicKey}
	srv := httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(srv.Close)
	g.URL = srv.URL + "/token"
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	kj, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "demo", "private_key_id": "k1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": email,
		"client_id": "1", "token_uri": g.URL})
	g.KeyJSON = string(kj)
	return g
}

func (g *Google) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		return
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	var claims struct {
		Iss, Scope, Aud string
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	_ = json.Unmarshal(payload, &claims)
	if rsa.VerifyPKCS1v15(g.pub, crypto.SHA256, sum[:], sig) != nil || claims.Iss != g.Email || claims.Aud != g.URL ||
		claims.Scope != "https://www.googleapis.com/auth/cloud-platform" {
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		return
	}
	n := g.issued.Add(1)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":"ya29.google-token-%d","token_type":"Bearer","expires_in":3600}`, n)
}

// Token returns the n-th access token it issues.
func (g *Google) Token(n int) string { return fmt.Sprintf("ya29.google-token-%d", n) }

// Issued returns how many tokens it has issued.
func (g *Google) Issued() int64 { return g.issued.Load() }

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }
