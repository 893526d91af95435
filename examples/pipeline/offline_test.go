package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// clusterVersion is the Kubernetes version your clusters run: Helm charts
// see it as .Capabilities.KubeVersion. Keep it in step with production.
const clusterVersion = "v1.37.2"

// loadApps reads the Applications of a manifests repository (repo/apps.yaml)
// and points each at the checked-out folder instead of its Git remote, so
// the test renders the commit under test, not the remote branch.
func loadApps(t *testing.T, repo string) []gitops.Application {
	t.Helper()
	root, err := filepath.Abs(repo)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "apps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	apps, err := gitops.LoadApplications(f) // strict: unknown fields fail, with line numbers
	if err != nil {
		t.Fatalf("%s: %v", f.Name(), err)
	}
	// An absolute path is a local folder (source/dir), whose only
	// revision is "" (the folder as it is). If some sources live in other
	// repositories, rewrite only those of this one.
	for i := range apps {
		if src := apps[i].Spec.Source; src != nil {
			src.RepoURL, src.TargetRevision = root, ""
		}
		for j := range apps[i].Spec.Sources {
			apps[i].Spec.Sources[j].RepoURL, apps[i].Spec.Sources[j].TargetRevision = root, ""
		}
	}
	return apps
}

// offlineEngine returns an engine that renders without a cluster. Render
// asks the destination's cluster cache for the server version and API
// versions (for Helm); this cache answers from constants and knows no live
// objects. The engine also probes the cluster (GET /version) before using
// it; the transport answers that probe itself, and the test fails if the
// engine sends any other request.
func offlineEngine(t *testing.T) *gitops.Engine {
	t.Helper()
	var requests atomic.Int32
	cfg := &rest.Config{Host: "https://cluster.invalid", WrapTransport: func(http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && r.URL.Path == "/version" {
				body := `{"major":"1","minor":"37","gitVersion":"` + clusterVersion + `"}`
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
					Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
			}
			requests.Add(1)
			return nil, fmt.Errorf("offline: %s %s", r.Method, r.URL.Path)
		})
	}}
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cfg}}
	opts.NewClusterCache = func(*rest.Config, cache.Options) (gitops.ClusterCache, error) { return offlineCache{}, nil }
	e, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Close()
		if n := requests.Load(); n > 0 {
			t.Errorf("the engine sent %d requests to a cluster; rendering must not need one", n)
		}
	})
	return e
}

// renderApp renders one app through the engine, failing the test with the
// app's name on error.
func renderApp(t *testing.T, e *gitops.Engine, app *gitops.Application) []*unstructured.Unstructured {
	t.Helper()
	objs, _, err := e.Render(context.Background(), app)
	if err != nil {
		t.Fatalf("app %s: render: %v", app.Name, err)
	}
	return objs
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// offlineCache is a gitops.ClusterCache with no cluster behind it: synced
// at once, empty, serving clusterVersion. If your charts test
// .Capabilities.APIVersions.Has, list those APIs in APIResources.
type offlineCache struct{}

func (offlineCache) Start(ctx context.Context) error                     { <-ctx.Done(); return nil }
func (offlineCache) WaitForSync(context.Context) error                   { return nil }
func (offlineCache) Stop()                                               {}
func (offlineCache) Get(resource.Key) (*unstructured.Unstructured, bool) { return nil, false }
func (offlineCache) Managed(string) []*unstructured.Unstructured         { return nil }
func (offlineCache) Namespace(string) []resource.Key                     { return nil }
func (offlineCache) Tainted() map[schema.GroupVersionKind]error          { return nil }
func (offlineCache) APIResources() []metav1.APIResourceList              { return nil }
func (offlineCache) ServerVersion() string                               { return clusterVersion }
func (offlineCache) Subscribe(func(cache.Event)) (unsubscribe func())    { return func() {} }
