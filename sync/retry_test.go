package sync

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRetryPolicyDelays(t *testing.T) {
	p := DefaultRetryPolicy(5)
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 3 * time.Minute, 3 * time.Minute}
	for i, w := range want {
		if got := p.delay(i); got != w {
			t.Errorf("delay(%d) = %v, want %v", i, got, w)
		}
	}
}

// A failing sync is retried by policy, and a newer revision pre-empts the
// retries of the old one.
func TestRetrySyncPreemptedByNewerRevision(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, _ := newSyncer(t, nil)
	failing := decode(t, ns, job(jobFailing, "migrate", "{argocd.argoproj.io/hook: PreSync}"))
	policy := RetryPolicy{Limit: 5, Backoff: 10 * time.Millisecond, Factor: 2, MaxBackoff: 50 * time.Millisecond}
	attempts := 0
	latest := func() string {
		attempts++
		if attempts >= 2 {
			return "fixed"
		}
		return "broken"
	}
	res, err := s.RetrySync(context.Background(), Request{App: "shop", Revision: "broken", Desired: failing, Namespace: ns}, policy, latest)
	var pre *PreemptedError
	if !errors.As(err, &pre) || pre.Newer != "fixed" || pre.Revision != "broken" {
		t.Fatalf("err = %v", err)
	}
	if res.Phase != Failed || attempts != 2 {
		t.Fatalf("phase %s after %d checks", res.Phase, attempts)
	}
}

func TestRetrySyncStopsAtLimit(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, _ := newSyncer(t, nil)
	failing := decode(t, ns, job(jobFailing, "migrate", "{argocd.argoproj.io/hook: PreSync}"))
	policy := RetryPolicy{Limit: 1, Backoff: 10 * time.Millisecond}
	checks := 0
	res, err := s.RetrySync(context.Background(), Request{App: "shop", Revision: "r", Desired: failing, Namespace: ns}, policy,
		func() string { checks++; return "r" })
	if err == nil || res.Phase != Failed || checks != 1 {
		t.Fatalf("phase %s, err %v, %d retries", res.Phase, err, checks)
	}
}
