package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubegitops/gitops"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// offlineEngine returns an engine that renders without a cluster: its only
// destination has no Config (an offline destination), so nothing ever
// connects; Helm charts see clusterVersion as .Capabilities.KubeVersion
// (list APIVersions too if your charts test .Capabilities.APIVersions).
func offlineEngine(t *testing.T) *gitops.Engine {
	t.Helper()
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", KubeVersion: clusterVersion}}
	e, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
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
