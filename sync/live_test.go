package sync

import (
	"context"
	"net/http"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// readCounter counts the GET requests a client sends for one resource path.
type readCounter struct {
	path  string
	gets  atomic.Int64
	next  http.RoundTripper
	setMu gosync.Mutex
}

func (c *readCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, c.path) {
		c.gets.Add(1)
	}
	return c.next.RoundTrip(r)
}

// liveSyncer is a syncer whose waits read through live, and a count of
// the GETs of Deployment ns/web its own client sends.
func liveSyncer(t *testing.T, ns string, live func(resource.Key) (*unstructured.Unstructured, bool)) (*Syncer, *readCounter) {
	t.Helper()
	checker, err := health.NewChecker(health.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.PollInterval = 50 * time.Millisecond
	with := Collaborators{Health: checker, Live: live}
	cfg := cluster.Config()
	rc := &readCounter{path: "/namespaces/" + ns + "/deployments/web"}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		rc.setMu.Lock()
		rc.next = rt
		rc.setMu.Unlock()
		return rc
	})
	s, err := New(cfg, opts, with)
	if err != nil {
		t.Fatal(err)
	}
	return s, rc
}

// stuckDeployment never becomes Available: its Pods fit no node.
const stuckDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {no-such-node: "true"}
      containers: [{name: web, image: nginx}]
`

// TestWaitReadsLiveWhenItCanBeBelieved: a wait for health reads the copy
// Options.Live gives (no GET of its own) when that copy is the object
// written at the generation written, and reads the API server instead
// while the copy is older than the write. The Deployment never becomes
// Available on the server; the Live copy, once current, says it is: the
// sync succeeds only by believing it.
func TestWaitReadsLiveWhenItCanBeBelieved(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	d := dyn(t)
	var calls atomic.Int64
	live := func(key resource.Key) (*unstructured.Unstructured, bool) {
		if key.Kind != "Deployment" || key.Name != "web" {
			return nil, false
		}
		obj, err := d.Resource(gvrDeployments).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return nil, false
		}
		if calls.Add(1) <= 2 {
			// A lagging watch: the copy from before the write.
			obj.SetGeneration(obj.GetGeneration() - 1)
			return obj, true
		}
		// A current copy, rolled out.
		gen := obj.GetGeneration()
		obj.Object["status"] = map[string]any{
			"observedGeneration": gen, "replicas": int64(2), "updatedReplicas": int64(2),
			"readyReplicas": int64(2), "availableReplicas": int64(2),
			"conditions": []any{
				map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
				map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
			},
		}
		return obj, true
	}
	s, reads := liveSyncer(t, ns, live)
	var yields, resumes atomic.Int64
	req := Request{App: "shop", Revision: "abc", Desired: decode(t, ns, stuckDeployment), Namespace: ns,
		Yield: func() func() { yields.Add(1); return func() { resumes.Add(1) } }}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := s.Sync(ctx, req)
	mustSucceed(t, res, err)
	if r := row(t, res, "apps/Deployment "+ns+"/web"); r.Health == nil || r.Health.Code != health.Healthy {
		t.Fatalf("deployment row %+v", r)
	}
	if got := calls.Load(); got != 3 {
		t.Fatalf("Live was asked %d times, want 3 (two stale copies, then the current one)", got)
	}
	// The plan reads the one Deployment by a GET (a kind of fewer than
	// listThreshold objects is not listed); then each stale copy cost one
	// GET of the wait's own, the current one none.
	if got := reads.gets.Load(); got != 3 {
		t.Fatalf("the syncer's own GETs of the Deployment: %d, want 3 (the plan's, then one per stale copy)", got)
	}
	// Yield and resume at the start (take a slot), Yield again for the
	// last wave's wait, never resumed: nothing is written after it.
	if yields.Load() != 2 || resumes.Load() != 1 {
		t.Fatalf("Yield called %d times, resumed %d times; want 2 and 1", yields.Load(), resumes.Load())
	}
}
