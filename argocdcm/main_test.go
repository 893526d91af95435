package argocdcm

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops"
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
func dirApp(name, dir, ns string) *gitops.Application {
	a := &gitops.Application{Spec: gitops.ApplicationSpec{
		Source:      &gitops.ApplicationSource{RepoURL: dir, Path: "app"},
		Destination: gitops.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}}
	a.Name = name
	return a
}

const webApp = testfiles.WebApp

// refreshUntil refreshes until cond holds (the cache follows the cluster
// by watch, so a refresh right after a sync may still see the old state).
func refreshUntil(t *testing.T, e *gitops.Engine, app *gitops.Application, what string, cond func(gitops.Status) bool) gitops.Status {
	t.Helper()
	var last gitops.Status
	var lastErr error
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		last, lastErr = e.Refresh(ctx, app)
		return lastErr == nil && cond(last), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: last status %+v, err %v", what, last, lastErr)
	}
	return last
}
