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

// readCounter counts the GET requests a client sends for one resource path
// and notes when they were sent, and when the object was last applied.
type readCounter struct {
	path    string
	next    http.RoundTripper
	setMu   gosync.Mutex
	mu      gosync.Mutex
	getsAt  []time.Time
	applyAt time.Time
}

func (c *readCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, c.path) {
		switch {
		case r.Method == http.MethodGet:
			c.mu.Lock()
			c.getsAt = append(c.getsAt, time.Now())
			c.mu.Unlock()
		case r.Method == http.MethodPatch && r.URL.Query().Get("dryRun") == "":
			resp, err := c.next.RoundTrip(r)
			c.mu.Lock()
			c.applyAt = time.Now() // once answered: the syncer's write time is after it
			c.mu.Unlock()
			return resp, err
		}
	}
	return c.next.RoundTrip(r)
}

// applied returns when the object was last applied (zero: not yet).
func (c *readCounter) applied() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applyAt
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
// written at the generation written. While the copy is older than the
// write, the wait leaves it to the cache for cacheGrace after the write (no
// GET), then reads the API server instead. The Deployment never becomes
// Available on the server; the Live copy, once current, says it is: the
// sync succeeds only by believing it.
func TestWaitReadsLiveWhenItCanBeBelieved(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	d := dyn(t)
	var s *Syncer
	var reads *readCounter
	staleFor := cacheGrace + 500*time.Millisecond
	live := func(key resource.Key) (*unstructured.Unstructured, bool) {
		if key.Kind != "Deployment" || key.Name != "web" {
			return nil, false
		}
		obj, err := d.Resource(gvrDeployments).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return nil, false
		}
		if at := reads.applied(); at.IsZero() || time.Since(at) < staleFor {
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
	s, reads = liveSyncer(t, ns, live)
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
	// The plan reads the one Deployment by a GET (a kind of fewer than
	// listThreshold objects is not listed) before the write; after it, no
	// GET within cacheGrace of the write while the cache lags, then the
	// wait's own GETs until the copy is current.
	applied := reads.applied()
	var before, early, late int
	reads.mu.Lock()
	for _, at := range reads.getsAt {
		switch {
		case at.Before(applied):
			before++
		case at.Sub(applied) < cacheGrace:
			early++
		default:
			late++
		}
	}
	reads.mu.Unlock()
	if before != 1 || early != 0 || late == 0 {
		t.Fatalf("GETs of the Deployment: %d before the write, %d within %s of it, %d after; want 1, 0 and some (the stale copy read from the API server once the grace ended)", before, early, cacheGrace, late)
	}
	// Yield and resume at the start (take a slot), Yield again for the
	// last wave's wait, never resumed: nothing is written after it.
	if yields.Load() != 2 || resumes.Load() != 1 {
		t.Fatalf("Yield called %d times, resumed %d times; want 2 and 1", yields.Load(), resumes.Load())
	}
}
