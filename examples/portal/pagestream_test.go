package main

import (
	"testing"
	"time"
)

// TestPageNudgesCoalesceABurst: a storm of status deliveries for one app
// is one push per pageGap: the first at once, the rest folded into one
// more push when the gap has passed (so the last state is pushed), and a
// page that joined during the burst gets the whole state then. Another
// app is not held back by the first one's gap.
func TestPageNudgesCoalesceABurst(t *testing.T) {
	n := newPageNudges()
	t0 := time.Now()
	n.nudge("a")
	apps, wait := n.due(t0)
	if len(apps) != 1 || apps["a"] || wait != 0 {
		t.Fatalf("first nudge: due %v, wait %s; want a (changes only), no wait", apps, wait)
	}
	for range 1000 {
		n.nudge("a")
	}
	n.joined("a")
	n.nudge("b")
	apps, wait = n.due(t0.Add(10 * time.Millisecond))
	if len(apps) != 1 || apps["b"] {
		t.Fatalf("during a's gap: due %v; want b alone", apps)
	}
	if wait != pageGap-10*time.Millisecond {
		t.Fatalf("a waits %s; want %s", wait, pageGap-10*time.Millisecond)
	}
	if apps, _ = n.due(t0.Add(50 * time.Millisecond)); len(apps) != 0 {
		t.Fatalf("still in a's gap: due %v", apps)
	}
	apps, wait = n.due(t0.Add(pageGap))
	if len(apps) != 1 || !apps["a"] || wait != 0 {
		t.Fatalf("after the gap: due %v, wait %s; want a once, whole (a page joined)", apps, wait)
	}
	if apps, wait = n.due(t0.Add(3 * pageGap)); len(apps) != 0 || wait != 0 {
		t.Fatalf("nothing nudged since: due %v, wait %s", apps, wait)
	}
	select {
	case <-n.wake:
	default:
		t.Fatal("a nudge did not signal wake")
	}
}
