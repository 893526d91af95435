package helm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/internal/helmindex"
)

// renderWithDependencyRepo renders the fixture with its sub-chart fetched
// from the repository at repoURL (FetchDependencies on).
func renderWithDependencyRepo(t *testing.T, repoURL string) error {
	t.Helper()
	vendored := fixture(t)
	snap := withoutVendoredDeps(vendored)
	snap.MapFS["charts/app/Chart.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(string(vendored.MapFS["charts/app/Chart.yaml"].Data),
		"    version: 0.1.0\n", "    version: 0.1.0\n    repository: "+repoURL+"\n", 1))}
	opts := DefaultOptions()
	opts.FetchDependencies = true
	_, err := New(opts).Render(context.Background(), prodInput(snap))
	return err
}

// A dependency repository's index is read as source/helmrepo and Helm
// read it: one without apiVersion is refused with a typed error naming
// the repository (it was accepted), and a repository URL with a query
// keeps it for index.yaml (it was appended after the query).
func TestDependencyIndexIsReadAsHelmReadsIt(t *testing.T) {
	vendored := fixture(t)
	srv, downloads := chartRepo(t, vendored.MapFS)
	if err := renderWithDependencyRepo(t, srv.URL+"/?token=abc"); err != nil {
		t.Fatalf("repository URL with a query: %v", err)
	}
	if n := downloads.Load(); n != 1 {
		t.Errorf("archive downloaded %d times, want once", n)
	}

	noAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/index.yaml" {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write([]byte("entries:\n  sub:\n    - apiVersion: v2\n      name: sub\n      version: 0.1.0\n      urls:\n        - " + srv.URL + "/sub-0.1.0.tgz\n"))
	}))
	t.Cleanup(noAPI.Close)
	err := renderWithDependencyRepo(t, strings.Replace(noAPI.URL, "http://", "http://user:SECRET@", 1))
	var ie *helmindex.Error
	if !errors.Is(err, helmindex.ErrNoAPIVersion) || !errors.As(err, &ie) {
		t.Fatalf("index without apiVersion: %v, want helmindex.ErrNoAPIVersion", err)
	}
	if !strings.Contains(err.Error(), strings.TrimPrefix(noAPI.URL, "http://")) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error %q must name the repository without its password", err)
	}
}
