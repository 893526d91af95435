package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubegitops/gitops/render"
)

func tgzFiles(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(data))
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

// chartRepo serves the fixture's sub-chart as a Helm chart repository and
// counts archive downloads.
func chartRepo(t *testing.T, snap fstestFS) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	archive := tgzFiles(t, map[string]string{
		"sub/Chart.yaml":        string(snap["charts/app/charts/sub/Chart.yaml"].Data),
		"sub/values.yaml":       string(snap["charts/app/charts/sub/values.yaml"].Data),
		"sub/templates/cm.yaml": string(snap["charts/app/charts/sub/templates/cm.yaml"].Data),
	})
	var downloads atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/index.yaml", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("apiVersion: v1\nentries:\n  sub:\n    - apiVersion: v2\n      name: sub\n      version: 0.1.0\n      urls:\n        - sub-0.1.0.tgz\n"))
	})
	mux.HandleFunc("/sub-0.1.0.tgz", func(w http.ResponseWriter, _ *http.Request) {
		downloads.Add(1)
		_, _ = w.Write(archive)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &downloads
}

type fstestFS = fstest.MapFS

// TestFetchDependenciesWhenAllowed: with FetchDependencies a dependency
// missing from charts/ is downloaded from its repository (once, for many
// concurrent renders) and renders exactly as the vendored copy does.
func TestFetchDependenciesWhenAllowed(t *testing.T) {
	vendored := fixture(t)
	want, err := New(DefaultOptions()).Render(context.Background(), prodInput(vendored))
	if err != nil {
		t.Fatal(err)
	}
	srv, downloads := chartRepo(t, vendored.MapFS)
	snap := withoutVendoredDeps(vendored)
	snap.MapFS["charts/app/Chart.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(string(vendored.MapFS["charts/app/Chart.yaml"].Data),
		"    version: 0.1.0\n", "    version: 0.1.0\n    repository: "+srv.URL+"\n", 1))}
	opts := DefaultOptions()
	opts.FetchDependencies = true
	r := New(opts)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := r.Render(context.Background(), prodInput(snap))
			if err == nil && len(got) != len(want) {
				err = errors.New("fetched dependency renders differently")
			}
			for i := range got {
				if err == nil && !equality.Semantic.DeepEqual(got[i].Object, want[i].Object) {
					err = errors.New("object " + got[i].GetName() + " differs from the vendored render")
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := downloads.Load(); n != 1 {
		t.Fatalf("archive downloaded %d times, want once", n)
	}
	// A repository that is not http(s) is refused.
	snap.MapFS["charts/app/Chart.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(string(vendored.MapFS["charts/app/Chart.yaml"].Data),
		"    version: 0.1.0\n", "    version: 0.1.0\n    repository: file:///etc\n", 1))}
	if _, err := r.Render(context.Background(), prodInput(snap)); !errors.Is(err, render.ErrSchemeNotAllowed) {
		t.Fatalf("file:// repository: %v, want ErrSchemeNotAllowed", err)
	}
}

// TestAllowListedRemoteValueFile: an http value file is fetched only when
// its scheme is allow-listed.
func TestAllowListedRemoteValueFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("config:\n  greeting: from-remote\n"))
	}))
	defer srv.Close()
	in := prodInput(fixture(t))
	in.Helm = &render.HelmSource{ValueFiles: []string{srv.URL + "/values.yaml"}}
	if _, err := New(DefaultOptions()).Render(context.Background(), in); !errors.Is(err, render.ErrSchemeNotAllowed) {
		t.Fatalf("http value file by default: %v, want ErrSchemeNotAllowed", err)
	}
	opts := DefaultOptions()
	opts.AllowedValueSchemes = []string{"http"}
	objs, err := New(opts).Render(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetName() == "demo-app-config" {
			if o.Object["data"].(map[string]any)["greeting"] != "from-remote" {
				t.Fatalf("remote values not applied: %v", o.Object["data"])
			}
			return
		}
	}
	t.Fatal("configmap missing")
}
