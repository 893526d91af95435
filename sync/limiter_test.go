package sync

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	gosync "sync"
	"testing"
	"time"
)

// inFlight counts the write requests in flight at once through the
// clients it wraps and remembers the most.
type inFlight struct {
	mu        gosync.Mutex
	now, most int
}

// wrap is a client-go transport wrapper counting through f; each
// transport a client builds keeps its own next.
func (f *inFlight) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet {
			return next.RoundTrip(r)
		}
		f.mu.Lock()
		f.now++
		f.most = max(f.most, f.now)
		f.mu.Unlock()
		defer func() { f.mu.Lock(); f.now--; f.mu.Unlock() }()
		return next.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (f *inFlight) peak() int { f.mu.Lock(); defer f.mu.Unlock(); return f.most }

// TestLimiterBoundsWritesAcrossSyncers: two syncers sharing a Limiter of 2
// (Argo CD's controller.kubectl.parallelism.limit) never have more than 2
// writes in flight together, each syncing 30 ConfigMaps with 8 writes
// allowed at once; without it they do.
func TestLimiterBoundsWritesAcrossSyncers(t *testing.T) {
	t.Parallel()
	run := func(l *Limiter) int {
		flight := &inFlight{}
		var wg gosync.WaitGroup
		for i := range 2 {
			ns := cluster.TestNamespace(t)
			cfg := cluster.Config()
			cfg.Wrap(flight.wrap)
			o := DefaultOptions()
			o.ApplyParallelism, o.DryRunParallelism = 8, 8
			s, err := New(cfg, o, Collaborators{Writes: l})
			if err != nil {
				t.Fatal(err)
			}
			var docs []string
			for j := range 30 {
				docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {a: b}\n", j))
			}
			desired := decode(t, ns, strings.Join(docs, "---\n"))
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := s.Sync(context.Background(), Request{App: fmt.Sprintf("app%d", i), Revision: "abc", Desired: desired, Namespace: ns})
				mustSucceed(t, res, err)
			}()
		}
		wg.Wait()
		return flight.peak()
	}
	if peak := run(NewLimiter(2)); peak > 2 {
		t.Errorf("%d writes in flight at once with a Limiter of 2", peak)
	}
	if peak := run(nil); peak <= 2 {
		t.Errorf("%d writes in flight at most without a Limiter: the test cannot tell", peak)
	}
	if NewLimiter(0) != nil {
		t.Error("NewLimiter(0) is a limit; a value below 1 means none, as Argo CD reads it")
	}
}

// TestWaveDelayWaitsBetweenWaves: with WaveDelay, the next wave starts
// no sooner than the delay after the last one is done (Argo CD's
// controller.sync.wave.delay.seconds).
func TestWaveDelayWaitsBetweenWaves(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	const delay = 1500 * time.Millisecond
	var mu gosync.Mutex
	var doneAt []time.Time
	s, _ := newSyncer(t, func(o *syncerSetup) {
		o.WaveDelay = delay
		o.OnProgress = func(Progress) { mu.Lock(); doneAt = append(doneAt, time.Now()); mu.Unlock() }
	})
	desired := decode(t, ns, `apiVersion: v1
kind: ConfigMap
metadata: {name: first, annotations: {argocd.argoproj.io/sync-wave: "0"}}
data: {a: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: second, annotations: {argocd.argoproj.io/sync-wave: "1"}}
data: {a: b}
`)
	res, err := s.Sync(context.Background(), Request{App: "waves", Revision: "abc", Desired: desired, Namespace: ns})
	mustSucceed(t, res, err)
	mu.Lock()
	defer mu.Unlock()
	if len(doneAt) != 2 || doneAt[1].Sub(doneAt[0]) < delay {
		t.Errorf("waves done at %v: want the second at least %s after the first", doneAt, delay)
	}
}
