package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate for 127.0.0.1 named cn, and
// its key, to certFile and keyFile, and returns the certificate.
func writeCert(t *testing.T, cn, certFile, keyFile string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// The key first: a reader between the two writes sees a mismatched
	// pair, which the reloader must survive by keeping the old one.
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bareServer is a portal server without an engine: enough for the login
// page and the login itself.
func bareServer(t *testing.T, trusted ...string) *server {
	t.Helper()
	tokFile := filepath.Join(t.TempDir(), "tokens.txt")
	if err := os.WriteFile(tokFile, []byte(fixtureTokens), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := loadTokenFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	proxies, err := parseTrustedProxies(strings.Join(trusted, ","))
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServer(serverOptions{Tokens: tokens, TrustedProxies: proxies})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTLSListenerReloadsCert serves the portal through the TLS listener
// of -tls-cert/-tls-key, rewrites the pair, and sees the new certificate
// served without a restart; over TLS the answers carry HSTS and the
// session cookie is Secure.
func TestTLSListenerReloadsCert(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := writeCert(t, "first.example", certFile, keyFile)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tlsListener(raw, certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: bareServer(t), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	t.Cleanup(func() {
		hs.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	base := "https://" + raw.Addr().String()
	roots := x509.NewCertPool()
	roots.AddCert(first)
	client := func() *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	}
	served := func() (string, *http.Response) {
		resp, err := client().Get(base + "/login")
		if err != nil {
			return err.Error(), nil
		}
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0].Subject.CommonName, resp
	}
	cn, resp := served()
	if cn != "first.example" {
		t.Fatalf("served %q, want first.example", cn)
	}
	if h := resp.Header.Get("Strict-Transport-Security"); h != hstsValue {
		t.Errorf("HSTS over TLS: %q, want %q", h, hstsValue)
	}
	if c := cookieNamed(resp, loginCSRFCookie); c == nil || !c.Secure {
		t.Errorf("login cookie over TLS: %+v, want Secure", c)
	}

	// Rotate: a new pair in the same files, picked up by the next
	// handshake (the reloader compares the files' mtime and size).
	second := writeCert(t, "second-rotated.example", certFile, keyFile)
	roots.AddCert(second)
	waitFor(t, 10*time.Second, "the rotated certificate", func() (bool, string) {
		cn, _ := served()
		return cn == "second-rotated.example", cn
	})
	// A broken pair (a renewal written halfway) keeps the last good one.
	if err := os.WriteFile(certFile, []byte("not a certificate, longer than before to change the size\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cn, _ := served(); cn != "second-rotated.example" {
		t.Errorf("after a broken write: %q, want the last good certificate", cn)
	}
	// A bad pair at start is refused, naming the files.
	if _, err := tlsListener(raw, certFile, keyFile); err == nil || !strings.Contains(err.Error(), certFile) {
		t.Errorf("bad pair at start: %v, want an error naming %s", err, certFile)
	}
}

// cookieNamed is resp's Set-Cookie of name.
func cookieNamed(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestForwardedProtoTrustedOnly logs in over plain HTTP through a "proxy"
// saying X-Forwarded-Proto https: from a trusted peer the session cookie
// is Secure and HSTS is sent; from an untrusted peer, and without the
// header, neither.
func TestForwardedProtoTrustedOnly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted []string
		proto   string
		https   bool
	}{
		{"trusted proxy says https", []string{"127.0.0.0/8"}, "https", true},
		{"trusted proxy, list of protos", []string{"::1", "127.0.0.1"}, "http, https", true},
		{"trusted proxy says http", []string{"127.0.0.1"}, "http", false},
		{"untrusted peer says https", []string{"10.0.0.0/8"}, "https", false},
		{"no trusted proxies", nil, "https", false},
		{"plain http", []string{"127.0.0.1"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(bareServer(t, tc.trusted...))
			defer ts.Close()
			c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			send := func(method, path string, body url.Values, cookie *http.Cookie) *http.Response {
				req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body.Encode()))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if tc.proto != "" {
					req.Header.Set("X-Forwarded-Proto", tc.proto)
				}
				if cookie != nil {
					req.AddCookie(&http.Cookie{Name: cookie.Name, Value: cookie.Value})
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp
			}
			page := send("GET", "/login", nil, nil)
			csrf := cookieNamed(page, loginCSRFCookie)
			if csrf == nil {
				t.Fatal("no login CSRF cookie")
			}
			login := send("POST", "/login", url.Values{"token": {tokAdmin}, "csrf": {csrf.Value}}, csrf)
			sess := cookieNamed(login, sessionCookie)
			if login.StatusCode != http.StatusSeeOther || sess == nil {
				t.Fatalf("login: %d, session cookie %v", login.StatusCode, sess)
			}
			for what, resp := range map[string]*http.Response{"login page": page, "login": login} {
				if got := resp.Header.Get("Strict-Transport-Security") == hstsValue; got != tc.https {
					t.Errorf("%s: HSTS %q, want present=%v", what, resp.Header.Get("Strict-Transport-Security"), tc.https)
				}
			}
			if csrf.Secure != tc.https || sess.Secure != tc.https {
				t.Errorf("Secure: login cookie %v, session cookie %v; want %v", csrf.Secure, sess.Secure, tc.https)
			}
		})
	}
}

// TestForwardedForFromTrustedOnly checks what the handlers see as the
// client: the X-Forwarded-For hop before the trusted proxies, and the
// forwarded host, only when the peer is trusted; otherwise the headers
// are dropped.
func TestForwardedForFromTrustedOnly(t *testing.T) {
	req := func(peer string) *http.Request {
		r := httptest.NewRequest("GET", "http://portal.internal/login", nil)
		r.RemoteAddr = peer + ":4711"
		r.Header.Set("X-Forwarded-For", "203.0.113.9, 10.1.2.3")
		r.Header.Set("X-Forwarded-Host", "portal.example.com")
		r.Header.Set("X-Forwarded-Proto", "https")
		return r
	}
	s := &server{opts: serverOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
	r, https := s.forwarded(req("10.9.9.9"))
	if !https || r.RemoteAddr != "203.0.113.9:0" || r.Host != "portal.example.com" {
		t.Errorf("trusted peer: https %v, client %s, host %s; want true, 203.0.113.9:0, portal.example.com", https, r.RemoteAddr, r.Host)
	}
	r, https = s.forwarded(req("192.0.2.1"))
	if https || r.RemoteAddr != "192.0.2.1:4711" || r.Host != "portal.internal" || r.Header.Get("X-Forwarded-For") != "" {
		t.Errorf("untrusted peer: https %v, client %s, host %s, XFF %q; want the peer's own", https, r.RemoteAddr, r.Host, r.Header.Get("X-Forwarded-For"))
	}
}
