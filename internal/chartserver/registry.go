package chartserver

import (
	"crypto/subtle"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcr "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"
)

// Registry is an OCI registry (go-containerregistry's in-memory registry)
// served over plain HTTP on loopback, optionally behind basic auth.
type Registry struct {
	// Host is "127.0.0.1:port".
	Host string

	t        testing.TB
	push     *registry.Client
	tagLists atomic.Int64
	blobs    atomic.Int64
}

// NewRegistry starts a registry; it stops with the test. With a username
// or password set, every request must carry them (basic auth).
func NewRegistry(t testing.TB, username, password string) *Registry {
	t.Helper()
	reg := &Registry{t: t}
	inner := ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if username != "" || password != "" {
			u, p, ok := req.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(username)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
				return
			}
		}
		switch {
		case strings.HasSuffix(req.URL.Path, "/tags/list"):
			reg.tagLists.Add(1)
		case strings.Contains(req.URL.Path, "/blobs/") && req.Method == http.MethodGet:
			reg.blobs.Add(1)
		}
		inner.ServeHTTP(w, req)
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	reg.Host = strings.TrimPrefix(srv.URL, "http://")
	opts := []registry.ClientOption{registry.ClientOptPlainHTTP(),
		registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json"))}
	if username != "" {
		opts = append(opts, registry.ClientOptBasicAuth(username, password))
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	reg.push = c
	return reg
}

// Push packages the chart folder dir and pushes it with Helm's registry
// client to Host/path/name:version; it returns the archive's bytes.
func (r *Registry) Push(path, dir string) []byte {
	r.t.Helper()
	c, err := loader.LoadDir(dir)
	if err != nil {
		r.t.Fatal(err)
	}
	p, err := chartutil.Save(c, r.t.TempDir())
	if err != nil {
		r.t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		r.t.Fatal(err)
	}
	ref := r.Host + "/" + strings.Trim(path, "/") + "/" + c.Name() + ":" + c.Metadata.Version
	if _, err := r.push.Push(data, ref); err != nil {
		r.t.Fatal(err)
	}
	return data
}

// PushImage writes a random container image (one layer) as
// Host/repo:tag with go-containerregistry and returns its digest: tags of
// an image for the image updater's tests.
func (r *Registry) PushImage(repo, tag string) string {
	r.t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		r.t.Fatal(err)
	}
	ref, err := name.NewTag(r.Host + "/" + strings.Trim(repo, "/") + ":" + tag)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		r.t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		r.t.Fatal(err)
	}
	return d.String()
}

// TagLists returns how many tag listings the registry served.
func (r *Registry) TagLists() int64 { return r.tagLists.Load() }

// BlobGets returns how many blob downloads the registry served.
func (r *Registry) BlobGets() int64 { return r.blobs.Load() }
