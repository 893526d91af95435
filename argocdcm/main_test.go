package argocdcm

import (
	"os"
	"testing"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/internal/testfiles/testengine"
	"github.com/kubegitops/gitops/testenv"
)

// cluster is the local cluster the engine tests of this package run on.
var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}

// newEngine builds an engine on the local cluster, as the root package's
// tests do, with tweak's changes to its options.
func newEngine(t *testing.T, tweak func(*gitops.Options)) *gitops.Engine {
	t.Helper()
	return testengine.New(t, cluster.Config(), tweak)
}

// repoDir writes files into a folder that serves as an app's source.
func repoDir(t *testing.T, files map[string]string) string { return testfiles.Tree(t, files) }

// dirApp is an app of the folder dir's app/ into namespace ns.
func dirApp(name, dir, ns string) *gitops.Application { return testengine.DirApp(name, dir, ns) }

const webApp = testfiles.WebApp

// refreshUntil refreshes app until cond holds (testengine.RefreshUntil).
func refreshUntil(t *testing.T, e *gitops.Engine, app *gitops.Application, what string, cond func(appstatus.Status) bool) appstatus.Status {
	t.Helper()
	return testengine.RefreshUntil(t, e, app, what, cond)
}
