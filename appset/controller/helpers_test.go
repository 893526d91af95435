package controller

import (
	"context"
	"testing"
	"time"

	gitops "github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/internal/testfiles/testengine"
)

// newEngine is an engine on the test cluster (testengine.New).
func newEngine(t *testing.T, tweak func(*gitops.Options)) *gitops.Engine {
	t.Helper()
	return testengine.New(t, cluster.Config(), tweak)
}

// startRun runs the engine on apps until the test ends.
func startRun(t *testing.T, e *gitops.Engine, apps ...*gitops.Application) {
	t.Helper()
	testengine.StartRun(t, e, apps...)
}

// startAppSets runs a Runner of sets on e until the test ends.
func startAppSets(t *testing.T, e *gitops.Engine, sets []appset.ApplicationSet, opts Options) *Runner {
	t.Helper()
	r, err := New(e, sets, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Runner.Run: %v", err)
		}
	})
	return r
}

// eventually waits until cond holds (testengine.Eventually).
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testengine.Eventually(t, timeout, what, cond)
}

// repoDir writes files into a folder that serves as an app's source.
func repoDir(t *testing.T, files map[string]string) string { return testfiles.Tree(t, files) }

// dirApp is an app of the folder dir's app/ into namespace ns.
func dirApp(name, dir, ns string) *gitops.Application { return testengine.DirApp(name, dir, ns) }

// managedApp is the app the engine's Run holds under the bare name (an
// app of the control namespace).
func managedApp(t *testing.T, e *gitops.Engine, name string) gitops.Application {
	t.Helper()
	a, ok := e.Apps().ManagedApp(v1alpha1.AppKey{Name: name})
	if !ok {
		t.Fatalf("Run holds no app %q", name)
	}
	return a
}
