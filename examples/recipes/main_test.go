package recipes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/testenv"
)

// Engine.Render reads the destination's version and API versions (for
// Helm) and probes it, so the engine tests run on a local API server.
var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.Options{APIServerOnly: true}, &cluster))
}

// newEngine returns an engine on the test cluster with opts applied.
func newEngine(t *testing.T, set func(*gitops.Options)) *gitops.Engine {
	t.Helper()
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	set(&opts)
	e, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// writeRepo writes files (path -> content) into a new folder and returns
// it: a local repository (an absolute path is a source/dir repoURL).
func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadApp decodes one Application manifest, with REPO replaced.
func loadApp(t *testing.T, manifest, repo string) *gitops.Application {
	t.Helper()
	apps, err := gitops.LoadApplications(strings.NewReader(strings.ReplaceAll(manifest, "REPO", repo)))
	if err != nil || len(apps) != 1 {
		t.Fatalf("load: %v (%d apps)", err, len(apps))
	}
	return &apps[0]
}
