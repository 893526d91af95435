package imageupdate

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source"
)

// testRegistry is go-containerregistry's registry on a loopback port.
type testRegistry struct {
	srv *httptest.Server
	// tagLists counts GET .../tags/list requests that reached it.
	host string
}

func startRegistry(t *testing.T, wrap func(http.Handler) http.Handler) *testRegistry {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &testRegistry{srv: srv, host: strings.TrimPrefix(srv.URL, "http://")}
}

// image returns a random image created at created for os/arch.
func testImage(t *testing.T, created time.Time, platform string) v1.Image {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: created}
	os, arch, _ := strings.Cut(platform, "/")
	cf.OS, cf.Architecture = os, arch
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// push writes img as repo:tag and returns its digest.
func (r *testRegistry) push(t *testing.T, repo, tag string, img v1.Image) string {
	t.Helper()
	ref, err := name.NewTag(r.host + "/" + repo + ":" + tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// pushIndex writes a multi-arch index of one image per platform.
func (r *testRegistry) pushIndex(t *testing.T, repo, tag string, created time.Time, platforms ...string) {
	t.Helper()
	var idx v1.ImageIndex = empty.Index
	for _, p := range platforms {
		os, arch, _ := strings.Cut(p, "/")
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: testImage(t, created, p), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: os, Architecture: arch}}})
	}
	ref, err := name.NewTag(r.host + "/" + repo + ":" + tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
}

const (
	pushUser = "updater"
	pushPass = "s3cret-push-token"
)

// startGit runs the repository's Git server with pushes allowed, and
// creates repository name from files.
func startGit(t *testing.T, name string, files fstest.MapFS) (*gitserver.Server, string) {
	t.Helper()
	opts := gitserver.DefaultOptions()
	opts.PushUsername, opts.PushPassword = pushUser, pushPass
	gs, _ := testfiles.GitRepo(t, opts, name, files)
	return gs, gs.RepoURL(name)
}

func pushCreds() *source.Credentials {
	return &source.Credentials{Username: pushUser, Password: pushPass}
}

// testOptions are defaults with a short registry timeout.
func testOptions() Options {
	o := DefaultOptions()
	o.Registry.Timeout = 10 * time.Second
	o.Git.Timeout = 30 * time.Second
	return o
}

func ann(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[Prefix+kv[i]] = kv[i+1]
	}
	return m
}

func writeExecutable(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}
