// Package testengine builds engines on a test cluster, the way the tests of
// the packages above the engine (argocdcm, the image updater's controller,
// the fault suite, the operator and the recipes) all do.
//
// It lives apart from package testfiles because it imports the root
// package, hence the engine: the engine's own tests are internal tests of
// package engine, which cannot import a package that imports it, so they
// keep their own builder (over the unexported newWithBuiltins) and use
// testfiles only.
package testengine

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
)

// New returns an engine from gitops.DefaultOptions whose one cluster,
// v1alpha1.KubernetesInClusterName at v1alpha1.KubernetesInternalAPIServerAddr, is reached with cfg, and whose sync gives up
// on a wave after a minute (a test fails sooner than the default ten). tweak,
// when set, changes the options last. The engine is closed when the test
// ends; the test fails if New does.
func New(t testing.TB, cfg *rest.Config, tweak func(*gitops.Options)) *gitops.Engine {
	t.Helper()
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: cfg}}
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

// DirApp is an app of the folder dir's app/ into namespace ns of the
// in-cluster destination.
func DirApp(name, dir, ns string) *gitops.Application {
	a := &gitops.Application{Spec: gitops.ApplicationSpec{
		Source:      &gitops.ApplicationSource{RepoURL: dir, Path: "app"},
		Destination: gitops.ApplicationDestination{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: ns},
	}}
	a.Name = name
	return a
}

// StartRun runs e on apps until the test ends.
func StartRun(t testing.TB, e *gitops.Engine, apps ...*gitops.Application) {
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

// RefreshUntil refreshes app until cond holds, for at most a minute (the
// cache follows the cluster by watch, so a refresh right after a sync may
// still see the old state), and returns the status that met it.
func RefreshUntil(t testing.TB, e *gitops.Engine, app *gitops.Application, what string, cond func(appstatus.Status) bool) appstatus.Status {
	t.Helper()
	var last appstatus.Status
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

// Eventually waits until cond holds, failing the test after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
