package controller

import (
	"os"
	"testing"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/internal/testfiles/testengine"
	"github.com/kubegitops/gitops/testenv"
)

// cluster is the local cluster the end-to-end tests of this package run on.
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

// gitApp is an automated app of url's app/ at branch into namespace ns.
func gitApp(name, url, branch, ns string) *gitops.Application {
	a := automated(&gitops.Application{Spec: gitops.ApplicationSpec{
		Source:      &gitops.ApplicationSource{RepoURL: url, Path: "app", TargetRevision: branch},
		Destination: gitops.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}})
	a.Name = name
	return a
}

// automated turns on automated sync with prune and self-heal.
func automated(a *gitops.Application) *gitops.Application {
	a.Spec.SyncPolicy = &gitops.SyncPolicy{Automated: &gitops.SyncPolicyAutomated{Prune: true, SelfHeal: true}}
	return a
}

// startRun runs the engine on apps until the test ends.
func startRun(t *testing.T, e *gitops.Engine, apps ...*gitops.Application) {
	t.Helper()
	testengine.StartRun(t, e, apps...)
}

// eventually waits until cond holds (testengine.Eventually).
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testengine.Eventually(t, timeout, what, cond)
}
