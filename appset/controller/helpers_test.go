package controller

import (
	"context"
	"testing"
	"time"

	gitops "github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/internal/testfiles"
	"k8s.io/apimachinery/pkg/util/wait"
)

// newEngine is an engine on the test cluster (the root package's test
// helper of the same name).
func newEngine(t *testing.T, tweak func(*gitops.Options)) *gitops.Engine {
	t.Helper()
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: "in-cluster", Server: "https://kubernetes.default.svc", Config: cluster.Config()}}
	opts.Sync.WaveTimeout = time.Minute
	if tweak != nil {
		tweak(&opts)
	}
	e, err := gitops.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// startRun runs the engine on apps until the test ends.
func startRun(t *testing.T, e *gitops.Engine, apps ...*gitops.Application) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	vals := make([]gitops.Application, len(apps))
	for i, a := range apps {
		vals[i] = *a
	}
	go func() { defer close(done); _ = e.Run(ctx, vals) }()
	t.Cleanup(func() { cancel(); <-done })
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

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// repoDir writes files into a folder that serves as an app's source.
func repoDir(t *testing.T, files map[string]string) string { return testfiles.Tree(t, files) }

func dirApp(name, dir, ns string) *gitops.Application {
	a := &gitops.Application{Spec: gitops.ApplicationSpec{
		Source:      &gitops.ApplicationSource{RepoURL: dir, Path: "app"},
		Destination: gitops.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
	}}
	a.Name = name
	return a
}

// managedApp is the app the engine's Run holds under the bare name (an
// app of the control namespace).
func managedApp(t *testing.T, e *gitops.Engine, name string) gitops.Application {
	t.Helper()
	a, ok := e.ManagedApp(v1alpha1.AppKey{Name: name})
	if !ok {
		t.Fatalf("Run holds no app %q", name)
	}
	return a
}
