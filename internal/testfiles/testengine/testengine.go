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
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
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
