package notify

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/internal/argodocs"
)

// The network edge of the services' tests. Four of Argo CD's services
// hard-code their API's host (pagerduty: api.pagerduty.com, pagerdutyv2:
// events.pagerduty.com, pushover: api.pushover.net, telegram:
// api.telegram.org), and teams-workflows refuses any URL but a Power
// Automate one. Their requests reach the local receivers through the
// proxy every Go HTTP client honours (HTTPS_PROXY): edgeProxy answers a
// CONNECT to a routed host by tunnelling to that host's receiver, a TLS
// server whose certificate edgeCA signed for the host, and refuses every
// other host, so no test reaches past loopback. The clients trust edgeCA
// through SSL_CERT_FILE (the system's roots and edgeCA). Both variables are
// set in TestMain, before any request reads them (Go reads each once), and
// after the release zip the tests read is opened, since opening it may run
// `go mod download`, which must not see them.
var (
	edgeCA    *edgeAuthority
	edgeProxy *proxy
)

func TestMain(m *testing.M) {
	os.Exit(runWithEdge(m))
}

func runWithEdge(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	r, err := argodocs.Open(ctx, argodocs.Version)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = r.Close()
	dir, err := os.MkdirTemp("", "notify-edge")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if edgeCA, err = newEdgeAuthority(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bundle := edgeCA.pem
	for _, f := range []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"} {
		if b, err := os.ReadFile(f); err == nil {
			bundle = append(b, bundle...)
			break
		}
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, bundle, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	edgeProxy = newProxy()
	defer edgeProxy.close()
	os.Setenv("SSL_CERT_FILE", caFile)
	os.Setenv("HTTPS_PROXY", "http://"+edgeProxy.ln.Addr().String())
	os.Unsetenv("NO_PROXY")
	os.Unsetenv("no_proxy")
	return m.Run()
}

// edgeAuthority signs the receivers' certificates for the hosts they
// stand in for.
type edgeAuthority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newEdgeAuthority() (*edgeAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "notify test edge CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &edgeAuthority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// serverCert is a certificate for host signed by the authority.
func (a *edgeAuthority) serverCert(host string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// proxy is an HTTP CONNECT proxy on loopback that tunnels each routed
// host to a local address and refuses the rest.
type proxy struct {
	ln     net.Listener
	mu     gosync.Mutex
	routes map[string]string // host:port -> local address
	wg     gosync.WaitGroup
}

func newProxy() *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	p := &proxy{ln: ln, routes: map[string]string{}}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	p.wg.Add(1)
	go func() { defer p.wg.Done(); _ = srv.Serve(ln) }()
	return p
}

func (p *proxy) close() { p.ln.Close(); p.wg.Wait() }

// route sends the CONNECTs to hostport (host:443) to a TLS receiver of
// handler whose certificate names the host, until the test ends.
func (p *proxy) route(t *testing.T, hostport string, handler http.Handler) {
	t.Helper()
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := edgeCA.serverCert(host)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(handler)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	p.mu.Lock()
	p.routes[hostport] = srv.Listener.Addr().String()
	p.mu.Unlock()
	t.Cleanup(func() {
		p.mu.Lock()
		delete(p.routes, hostport)
		p.mu.Unlock()
		srv.Close()
	})
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	to, ok := p.routes[r.Host]
	p.mu.Unlock()
	if r.Method != http.MethodConnect || !ok {
		http.Error(w, "the test edge routes no "+r.Host, http.StatusBadGateway)
		return
	}
	upstream, err := net.DialTimeout("tcp", to, 10*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	_, _ = conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	// Either direction ending ends the tunnel.
	var once gosync.Once
	end := func() { once.Do(func() { upstream.Close(); conn.Close() }) }
	go func() { defer end(); _, _ = io.Copy(upstream, buf) }()
	go func() { defer end(); _, _ = io.Copy(conn, upstream) }()
}
