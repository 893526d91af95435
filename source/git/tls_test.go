package git

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source"
)

// clientCert returns a self-signed client certificate and key as PEM.
func clientCert(t *testing.T) (certPEM, keyPEM []byte, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "gitops-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), cert
}

// A Git server over HTTPS with a private CA that demands a client
// certificate: the credentials' CAData and TLS client certificate are
// used, and without them the handshake fails with a typed error.
func TestPrivateCAAndClientCertificate(t *testing.T) {
	plain := newGitServer(t, "", "")
	w := newWorkRepo(t, plain.root, "mtls")
	w.write(map[string]string{"a.yaml": "kind: A\n"})
	commit := w.commit("one")
	w.publish()
	certPEM, keyPEM, cert := clientCert(t)
	srv := httptest.NewUnstartedServer(plain.srv.Config.Handler)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	url := srv.URL + "/mtls.git"
	ctx := context.Background()
	s := newSource(t)

	good := source.Repository{URL: url, Credentials: &source.Credentials{CAData: caPEM, TLSClientCertData: certPEM, TLSClientKeyData: keyPEM}}
	rev, err := s.Resolve(ctx, good, "main")
	if err != nil || rev.Commit != commit {
		t.Fatalf("resolve over mTLS = %v, %v", rev, err)
	}
	if _, err := s.Snapshot(ctx, good, rev); err != nil {
		t.Fatal(err)
	}
	noCert := source.Repository{URL: url, Credentials: &source.Credentials{CAData: caPEM}}
	if _, err := s.Resolve(ctx, noCert, "main"); err == nil {
		t.Fatal("a server that demands a client certificate answered without one")
	}
	if _, err := s.Resolve(ctx, source.Repository{URL: url}, "main"); err == nil {
		t.Fatal("an untrusted server certificate was accepted")
	}
	bad := source.Repository{URL: url, Credentials: &source.Credentials{CAData: caPEM, TLSClientCertData: certPEM, TLSClientKeyData: []byte("KEY-SECRET-not-pem")}}
	_, err = s.Resolve(ctx, bad, "main")
	if !errors.Is(err, source.ErrInvalidRepository) || strings.Contains(err.Error(), "KEY-SECRET") {
		t.Fatalf("malformed client key: %v", err)
	}
}

func TestRepositoryProxy(t *testing.T) {
	srv := newGitServer(t, "", "")
	w := newWorkRepo(t, srv.root, "proxied")
	w.write(map[string]string{"a.yaml": "kind: A\n"})
	commit := w.commit("one")
	w.publish()
	proxy := chartserver.NewProxy(t)
	s := newSource(t)
	repo := source.Repository{URL: srv.url("proxied"), Credentials: &source.Credentials{Proxy: proxy.URL}}
	rev, err := s.Resolve(context.Background(), repo, "main")
	if err != nil || rev.Commit != commit {
		t.Fatalf("resolve through a proxy: %v %v", rev, err)
	}
	if _, err := s.Snapshot(context.Background(), repo, rev); err != nil {
		t.Fatal(err)
	}
	if proxy.Forwards() < 2 {
		t.Errorf("the proxy forwarded %d requests, want the ls-remote and the fetch", proxy.Forwards())
	}
}
