package chartserver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/subtle"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	ggcr "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ArtifactOptions configure an ArtifactRegistry.
type ArtifactOptions struct {
	// Username and Password, when either is set, are required of every
	// request (basic auth).
	Username, Password string
	// TLS serves HTTPS with httptest's certificate (ArtifactRegistry.CAData
	// trusts it); otherwise plain HTTP.
	TLS bool
}

// ArtifactRegistry is an OCI registry (go-containerregistry's in-memory
// registry) on loopback holding OCI artifacts as Argo CD reads them as
// application sources: one gzipped tar layer of manifests.
type ArtifactRegistry struct {
	// Host is "127.0.0.1:port".
	Host string
	// CAData is the PEM certificate a client trusts the TLS registry with
	// (nil over plain HTTP).
	CAData []byte

	t        testing.TB
	opts     ArtifactOptions
	client   *http.Client
	tagLists atomic.Int64
	blobs    atomic.Int64
	conns    atomic.Int64
}

// NewArtifactRegistry starts a registry; it stops with the test.
func NewArtifactRegistry(t testing.TB, opts ArtifactOptions) *ArtifactRegistry {
	t.Helper()
	reg := &ArtifactRegistry{t: t, opts: opts}
	inner := ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if opts.Username != "" || opts.Password != "" {
			u, p, ok := req.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(opts.Username)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(opts.Password)) != 1 {
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
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			reg.conns.Add(1)
		}
	}
	if opts.TLS {
		srv.StartTLS()
		reg.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		reg.Host = strings.TrimPrefix(srv.URL, "https://")
	} else {
		srv.Start()
		reg.Host = strings.TrimPrefix(srv.URL, "http://")
	}
	reg.client = srv.Client()
	t.Cleanup(srv.Close)
	return reg
}

// URL returns "oci://Host/repo", an application source's repoURL.
func (r *ArtifactRegistry) URL(repo string) string {
	return "oci://" + r.Host + "/" + strings.Trim(repo, "/")
}

// Push writes files (path -> content) as one gzipped tar layer of media
// type application/vnd.oci.image.layer.v1.tar+gzip, tags the artifact
// Host/repo:tag and returns its manifest digest.
func (r *ArtifactRegistry) Push(repo, tag string, files map[string]string) string {
	r.t.Helper()
	return r.PushLayer(repo, tag, "application/vnd.oci.image.layer.v1.tar+gzip", TarGz(r.t, files))
}

// PushLayer writes one layer of mediaType (its bytes as given) as the
// artifact Host/repo:tag and returns its manifest digest.
func (r *ArtifactRegistry) PushLayer(repo, tag, mediaType string, layer []byte) string {
	r.t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, "application/vnd.oci.image.config.v1+json")
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(layer, types.MediaType(mediaType))})
	if err != nil {
		r.t.Fatal(err)
	}
	ref, err := name.NewTag(r.Host+"/"+strings.Trim(repo, "/")+":"+tag, name.Insecure)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := remote.Write(ref, img, r.remoteOptions()...); err != nil {
		r.t.Fatal(err)
	}
	return digest(r.t, img)
}

func (r *ArtifactRegistry) remoteOptions() []remote.Option {
	opts := []remote.Option{remote.WithTransport(r.client.Transport)}
	if r.opts.Username != "" || r.opts.Password != "" {
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: r.opts.Username, Password: r.opts.Password}))
	}
	return opts
}

func digest(t testing.TB, img v1.Image) string {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// TagLists returns how many tag listings the registry served.
func (r *ArtifactRegistry) TagLists() int64 { return r.tagLists.Load() }

// BlobGets returns how many blob downloads the registry served.
func (r *ArtifactRegistry) BlobGets() int64 { return r.blobs.Load() }

// Conns returns how many connections clients opened to the registry.
func (r *ArtifactRegistry) Conns() int64 { return r.conns.Load() }

// TarGz returns files (path -> content) as a gzipped tar, in path order.
func TarGz(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
