package helmrepo_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/kubegitops/gitops/internal/chartserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/helmrepo"
)

func ociSource(t *testing.T) *helmrepo.Source {
	return newSource(t, func(o *helmrepo.Options) { o.PlainHTTP = true })
}

// Charts pushed by Helm's registry client to an in-process registry are
// resolved by constraint and snapshotted, through oci:// URLs and through
// Argo's bare host/path with EnableOCI, with basic auth; a version is
// pulled once.
func TestOCIChartsResolveAndSnapshot(t *testing.T) {
	reg := chartserver.NewRegistry(t, user, password)
	for _, v := range []string{"1.0.0", "1.0.1", "1.1.0+build.7"} {
		reg.Push("charts", chartserver.WebChart(t, "web", v))
	}
	s := ociSource(t)
	ctx := context.Background()
	creds := &source.Credentials{Username: user, Password: password}
	bare := &source.Credentials{Username: user, Password: password, EnableOCI: true}
	for _, repo := range []source.Repository{
		{URL: "oci://" + reg.Host + "/charts", Chart: "web", Credentials: creds},
		{URL: reg.Host + "/charts", Chart: "web", Credentials: bare},
	} {
		for _, c := range []struct{ revision, want string }{
			{"1.0.x", "1.0.1"}, {"1.0.0", "1.0.0"}, {"*", "1.1.0+build.7"}, {"^1.1", "1.1.0+build.7"},
		} {
			rev, err := s.Resolve(ctx, repo, c.revision)
			if err != nil {
				t.Fatalf("%s: resolve %q: %v", repo.URL, c.revision, err)
			}
			if rev.Commit != c.want {
				t.Errorf("%s: resolve %q = %s, want %s", repo.URL, c.revision, rev.Commit, c.want)
			}
		}
		var wg sync.WaitGroup
		for _, v := range []string{"1.0.1", "1.0.1", "1.1.0+build.7"} {
			wg.Go(func() {
				snap, err := s.Snapshot(ctx, repo, source.Revision{Commit: v})
				if err != nil {
					t.Error(err)
					return
				}
				data, err := fs.ReadFile(snap, "Chart.yaml")
				if err != nil || !strings.Contains(string(data), "version: "+v) {
					t.Errorf("Chart.yaml of %s: %q %v", v, data, err)
				}
			})
		}
		wg.Wait()
	}
	// Two URLs of one registry (same identity only for the oci:// form
	// and the bare form's credentials differ by EnableOCI): each pulls
	// each version once.
	if d := s.Stats().Downloads; d != 4 {
		t.Errorf("downloads = %d, want 4 (two versions by two repository forms)", d)
	}
	if n := reg.TagLists(); n != 2 {
		t.Errorf("tag lists = %d, want 2 (one per repository form within the TTL)", n)
	}

	_, err := s.Resolve(ctx, source.Repository{URL: "oci://" + reg.Host + "/charts", Chart: "web",
		Credentials: &source.Credentials{Username: user, Password: "nope-" + password}}, "*")
	if !errors.Is(err, source.ErrAuthentication) || strings.Contains(err.Error(), password) {
		t.Errorf("wrong registry password: %v", err)
	}
	_, err = s.Resolve(ctx, source.Repository{URL: "oci://" + reg.Host + "/charts", Chart: "web", Credentials: creds}, "9.x")
	if !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("resolve 9.x: %v", err)
	}
}

// A registry served over plain HTTP: without insecureOCIForceHttp the
// error says so and names the option (it used to read like a dead port);
// with it the chart resolves and snapshots, and the next resolve is
// served from the tag cache.
func TestPlainHTTPRegistryNeedsInsecureOCIForceHTTP(t *testing.T) {
	reg := chartserver.NewRegistry(t, user, password)
	reg.Push("charts", chartserver.WebChart(t, "web", "1.0.0"))
	s := newSource(t, nil) // HTTPS, as a production source
	ctx := context.Background()
	repo := source.Repository{URL: "oci://" + reg.Host + "/charts", Chart: "web", Credentials: &source.Credentials{Username: user, Password: password}}
	_, err := s.Resolve(ctx, repo, "1.0.0")
	if !errors.Is(err, helmrepo.ErrPlainHTTPRegistry) || !strings.Contains(err.Error(), "insecureOCIForceHttp") || strings.Contains(err.Error(), password) {
		t.Fatalf("resolve over HTTPS from a plain-HTTP registry: %v, want ErrPlainHTTPRegistry naming insecureOCIForceHttp", err)
	}
	forced := repo
	forced.Credentials = &source.Credentials{Username: user, Password: password, InsecureOCIForceHTTP: true}
	rev, err := s.Resolve(ctx, forced, "1.0.x")
	if err != nil || rev.Commit != "1.0.0" {
		t.Fatalf("resolve with insecureOCIForceHttp: %v %v", rev, err)
	}
	snap, err := s.Snapshot(ctx, forced, rev)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := fs.ReadFile(snap, "Chart.yaml"); err != nil || !strings.Contains(string(data), "version: 1.0.0") {
		t.Fatalf("Chart.yaml: %q %v", data, err)
	}
	lists := reg.TagLists()
	if rev, err := s.Resolve(ctx, forced, "1.0.x"); err != nil || rev.Commit != "1.0.0" || reg.TagLists() != lists {
		t.Fatalf("second resolve: %v %v, tag lists %d -> %d", rev, err, lists, reg.TagLists())
	}
}
