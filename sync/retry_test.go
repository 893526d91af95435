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

// RetryRefreshing syncs what next returns on each retry (Argo CD's
// retry.refresh): a failing revision followed by a good one succeeds at
// the good one; a next that fails ends the retries with an Error.
func TestRetryRefreshingSyncsTheNextRequest(t *testing.T) {
	t.Parallel()
	ns := cluster.TestNamespace(t)
	s, _ := newSyncer(t, nil)
	failing := decode(t, ns, job(jobFailing, "migrate", "{argocd.argoproj.io/hook: PreSync}"))
	good := decode(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\ndata: {a: b}\n")
	policy := RetryPolicy{Limit: 3, Backoff: 10 * time.Millisecond}
	var asked []string
	res, err := RetryRefreshing(context.Background(), s, Request{App: "shop", Revision: "broken", Desired: failing, Namespace: ns}, policy,
		func(_ context.Context, prev Request) (Request, error) {
			asked = append(asked, prev.Revision)
			prev.Revision, prev.Desired = "fixed", good
			return prev, nil
		})
	if err != nil || res.Phase != Succeeded || len(asked) != 1 || asked[0] != "broken" {
		t.Fatalf("phase %s, err %v, next called for %v; want Succeeded after one refresh of broken", res.Phase, err, asked)
	}
	boom := errors.New("render failed")
	res, err = RetryRefreshing(context.Background(), s, Request{App: "shop", Revision: "broken", Desired: failing, Namespace: ns}, policy,
		func(context.Context, Request) (Request, error) { return Request{}, boom })
	if !errors.Is(err, boom) || res.Phase != Error {
		t.Fatalf("phase %s, err %v; want Error carrying the refresh's error", res.Phase, err)
	}
}
