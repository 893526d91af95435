package recipes

import (
	"os"
	"strings"
	"testing"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/internal/testfiles/testengine"
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
	return testengine.New(t, cluster.Config(), set)
}

// writeRepo writes files (path -> content) into a new folder and returns
// it: a local repository (an absolute path is a source/dir repoURL).
func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	return testfiles.Tree(t, files)
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
