package engine

import (
	"testing"
	"time"
)

// TestJitter checks the delay of periodic refreshes: Interval plus at most
// Jitter (Interval/10 by default), exactly Interval when Jitter is negative
// (argocd-cm's timeout.reconciliation.jitter: 0).
func TestJitter(t *testing.T) {
	for _, c := range []struct {
		jitter, max time.Duration
	}{{0, 10 * time.Second}, {30 * time.Second, 30 * time.Second}, {-1, 0}} {
		e := &Engine{}
		e.live.Store(&liveParts{opts: Options{Interval: 100 * time.Second, Jitter: c.jitter}})
		r := &runner{e: e}
		seen := map[time.Duration]bool{}
		for range 200 {
			d := r.jitter()
			if d < 100*time.Second || d > 100*time.Second+c.max {
				t.Fatalf("jitter %v: delay %v out of [100s, 100s+%v]", c.jitter, d, c.max)
			}
			seen[d] = true
		}
		if c.max > 0 && len(seen) < 10 {
			t.Fatalf("jitter %v: only %d distinct delays", c.jitter, len(seen))
		}
	}
}
