package chartserver

import (
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"
)

// Options configure a Repo.
type Options struct {
	// TLS serves HTTPS with a certificate of httptest's own CA (Repo.CAPEM).
	TLS bool
	// Username and Password, when set, are required (basic auth) on
	// every request.
	Username, Password string
	// BearerToken, when set, is required ("Authorization: Bearer") on
	// every request instead of basic auth.
	BearerToken string
	// ClientCAs, with TLS, makes the server demand a client certificate
	// signed by one of them (see ClientCert).
	ClientCAs *x509.CertPool
}

// Repo is a Helm chart repository served over HTTP(S) on loopback.
type Repo struct {
	// URL is the repository URL (no trailing slash).
	URL string
	// CAPEM is the PEM certificate clients must trust with Options.TLS.
	CAPEM []byte
	// Dir holds the archives and index.yaml.
	Dir string

	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	counts map[string]*atomic.Int64
	extra  []extraEntry
}

// New starts a repository; it stops with the test.
func New(t testing.TB, opts Options) *Repo {
	t.Helper()
	r := &Repo{Dir: t.TempDir(), t: t, counts: map[string]*atomic.Int64{}}
	files := http.FileServer(http.Dir(r.Dir))
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if opts.BearerToken != "" {
			if subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), []byte("Bearer "+opts.BearerToken)) != 1 {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		} else if opts.Username != "" || opts.Password != "" {
			u, p, ok := req.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(opts.Username)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(opts.Password)) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		r.counter(req.URL.Path).Add(1)
		files.ServeHTTP(w, req)
	})
	if opts.TLS {
		r.srv = httptest.NewUnstartedServer(h)
		if opts.ClientCAs != nil {
			r.srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: opts.ClientCAs}
		}
		r.srv.StartTLS()
		r.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
	} else {
		r.srv = httptest.NewServer(h)
	}
	t.Cleanup(r.srv.Close)
	r.URL = r.srv.URL
	r.writeIndex()
	return r
}

func (r *Repo) counter(path string) *atomic.Int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.counts[path]
	if !ok {
		c = &atomic.Int64{}
		r.counts[path] = c
	}
	return c
}

// Requests returns how many authorised requests path ("/index.yaml",
// "/web-1.0.1.tgz") received.
func (r *Repo) Requests(path string) int64 { return r.counter(path).Load() }

// ArchiveRequests returns the requests for any .tgz.
func (r *Repo) ArchiveRequests() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for p, c := range r.counts {
		if strings.HasSuffix(p, ".tgz") {
			n += c.Load()
		}
	}
	return n
}

// Add packages the chart folder dir with Helm's chartutil.Save and
// re-indexes the repository; it returns the archive's path.
func (r *Repo) Add(dir string) string {
	r.t.Helper()
	c, err := loader.LoadDir(dir)
	if err != nil {
		r.t.Fatal(err)
	}
	p, err := chartutil.Save(c, r.Dir)
	if err != nil {
		r.t.Fatal(err)
	}
	r.writeIndex()
	return p
}

// AddArchive puts a ready archive (possibly hostile) into the repository
// as name-version.bin (out of reach of Helm's indexer, which would load
// it) and indexes it under name and version, without a digest.
func (r *Repo) AddArchive(name, version string, data []byte) {
	r.t.Helper()
	file := fmt.Sprintf("%s-%s.bin", name, version)
	if err := os.WriteFile(filepath.Join(r.Dir, file), data, 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	r.extra = append(r.extra, extraEntry{name, version, file})
	r.mu.Unlock()
	r.writeIndex()
}

type extraEntry struct{ name, version, file string }

func (r *Repo) writeIndex() {
	r.t.Helper()
	idx, err := repo.IndexDirectory(r.Dir, r.URL)
	if err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	for _, e := range r.extra {
		md := &chart.Metadata{APIVersion: chart.APIVersionV2, Name: e.name, Version: e.version}
		if err := idx.MustAdd(md, e.file, r.URL, ""); err != nil {
			r.mu.Unlock()
			r.t.Fatal(err)
		}
	}
	r.mu.Unlock()
	idx.SortEntries()
	if err := idx.WriteFile(filepath.Join(r.Dir, "index.yaml"), 0o644); err != nil {
		r.t.Fatal(err)
	}
}
