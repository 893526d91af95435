package sync

import (
	"context"
	"net/http"
	"os"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/testenv"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}

// decode reads YAML manifests for a test, with the namespace filled in.
func decode(t *testing.T, ns, yaml string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := resource.Decode(t.Name()+".yaml", []byte(strings.ReplaceAll(yaml, "NS", ns)), resource.DefaultDecodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// writeCounter counts the write requests a client sends.
type writeCounter struct {
	mu     gosync.Mutex
	writes int
	next   http.RoundTripper
}

func (w *writeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		if !strings.Contains(r.URL.RawQuery, "dryRun=All") {
			w.mu.Lock()
			w.writes++
			w.mu.Unlock()
		}
	}
	return w.next.RoundTrip(r)
}

func (w *writeCounter) count() int { w.mu.Lock(); defer w.mu.Unlock(); return w.writes }

// syncerSetup is what newSyncer's tweak may change: the settings and the
// collaborators.
type syncerSetup struct {
	Options
	Collaborators
}

// newSyncer returns a syncer with the real health checker, short waits, and
// a counter of the writes it sends.
func newSyncer(t *testing.T, tweak func(*syncerSetup)) (*Syncer, *writeCounter) {
	t.Helper()
	checker, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	o := syncerSetup{Options: DefaultOptions()}
	o.Health = checker
	o.WaveTimeout = 2 * time.Minute
	o.PollInterval = 100 * time.Millisecond
	if tweak != nil {
		tweak(&o)
	}
	cfg := cluster.Config()
	counter := &writeCounter{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	s, err := New(cfg, o.Options, o.Collaborators)
	if err != nil {
		t.Fatal(err)
	}
	return s, counter
}

func dyn(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var (
	gvrConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrJobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

func get(t *testing.T, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, bool) {
	t.Helper()
	obj, err := dyn(t).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj, true
}

func row(t *testing.T, res Result, key string) ResourceResult {
	t.Helper()
	for _, r := range res.Results {
		if r.Key.String() == key {
			return r
		}
	}
	t.Fatalf("no result row for %s in %+v", key, res.Results)
	return ResourceResult{}
}

func mustSucceed(t *testing.T, res Result, err error) {
	t.Helper()
	if err != nil || res.Phase != Succeeded {
		t.Fatalf("sync: phase %s, err %v\n%s", res.Phase, err, res.Summary())
	}
}

func decodeOne(t *testing.T, yaml string) *unstructured.Unstructured {
	t.Helper()
	objs, err := resource.Decode("x.yaml", []byte(yaml), resource.DefaultDecodeOptions())
	if err != nil || len(objs) != 1 {
		t.Fatalf("decode: %v", err)
	}
	return objs[0]
}

// dynamic0 is dyn for benchmarks: no client-side rate limit.
func dynamic0(tb testing.TB) dynamic.Interface {
	cfg := cluster.Config()
	cfg.QPS = -1
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// newBenchSyncer is the syncer a host would use for a bulk sync: the real
// health checker, no wait on the last wave (the comparison is of writes),
// and a write counter.
func newBenchSyncer(tb testing.TB) (*Syncer, *writeCounter) {
	checker, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		tb.Fatal(err)
	}
	opts := DefaultOptions()
	with := Collaborators{Health: checker}
	opts.WaitFinalWave = false
	differ, err := diff.New(diff.DefaultOptions())
	if err != nil {
		tb.Fatal(err)
	}
	with.InSync = DifferInSync(differ)
	cfg := cluster.Config()
	cfg.QPS = -1 // no client-side rate limit: measure the work, not a token bucket
	counter := &writeCounter{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	s, err := New(cfg, opts, with)
	if err != nil {
		tb.Fatal(err)
	}
	return s, counter
}
