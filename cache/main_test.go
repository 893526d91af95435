package cache

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/testenv"
)

// cluster is shared by the package's tests: an API server without
// controllers (the cache needs none) and one restricted user.
var cluster *testenv.Cluster

const restrictedUser = "restricted"

func TestMain(m *testing.M) {
	opts := testenv.DefaultOptions()
	opts.APIServerOnly = true
	opts.Users = []testenv.User{{Name: restrictedUser}}
	os.Exit(testenv.RunMain(m, opts, &cluster))
}

// cacheSetup is what the tests' mutate functions may change: the
// settings and the collaborators.
type cacheSetup struct {
	Options
	Collaborators
}

// startCache starts a cache on cfg with options changed by mutate, waits for
// it to sync and stops it when the test ends.
func startCache(t testing.TB, cfg *rest.Config, mutate func(*cacheSetup)) *ClusterCache {
	t.Helper()
	opts := cacheSetup{Options: DefaultOptions()}
	opts.RetryMax = 2 * time.Second
	if mutate != nil {
		mutate(&opts)
	}
	c, err := New(cfg, opts.Options, opts.Collaborators)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Start(ctx) }()
	t.Cleanup(func() { cancel(); c.Stop() })
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Start did not return within 2 minutes")
	}
	return c
}

// waitFor polls cond every 20 ms until it holds or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting %s for %s: %v", timeout, what, err)
	}
}

func clients(t testing.TB, cfg *rest.Config) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, dyn
}

func fromYAML(t testing.TB, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
