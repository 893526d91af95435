package engine

import (
	"context"
	gosync "sync"
	"testing"
	"time"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/sync"
)

// SyncRequest.Retry retries a failing sync by its own policy, in place of
// the app's syncPolicy.retry, as Argo CD's sync request's retryStrategy
// does: with every ConfigMap judged Degraded each attempt fails; Retry
// {limit: 2} runs it three times, no retry at all once, and a request's
// {limit: 0} once although the app's policy would retry five times.
func TestSyncRequestRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := cluster.TestNamespace(t)
	ho := health.DefaultOptions()
	ho.Overrides = map[string]string{"ConfigMap": `return {status = "Degraded", message = "bad on purpose"}`}
	checker, err := health.NewChecker(ho)
	if err != nil {
		t.Fatal(err)
	}
	var mu gosync.Mutex
	attempts := 0
	e := newEngine(t, func(o *Options) {
		o.Health = checker
		o.Sync.OnProgress = func(p sync.Progress) {
			if p.Final {
				mu.Lock()
				attempts++
				mu.Unlock()
			}
		}
	})
	app := dirApp(ns, repoDir(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\n"}), ns)
	one := int64(1)
	quick := &Backoff{Duration: "1s", Factor: &one}
	for _, c := range []struct {
		what   string
		policy *RetryStrategy
		req    *RetryStrategy
		want   int
	}{
		{"request limit 2", nil, &RetryStrategy{Limit: 2, Backoff: quick}, 3},
		{"no retry", nil, nil, 1},
		{"request limit 0 over the app's 5", &RetryStrategy{Limit: 5, Backoff: quick}, &RetryStrategy{Limit: 0}, 1},
	} {
		mu.Lock()
		attempts = 0
		mu.Unlock()
		app.Spec.SyncPolicy = nil
		if c.policy != nil {
			app.Spec.SyncPolicy = &SyncPolicy{Retry: c.policy}
		}
		start := time.Now()
		res, _ := e.Sync(ctx, app, SyncRequest{Retry: c.req})
		mu.Lock()
		got := attempts
		mu.Unlock()
		if res.Phase != sync.Failed || got != c.want {
			t.Errorf("%s: %s after %d attempts (%s), want Failed after %d", c.what, res.Phase, got, time.Since(start).Round(time.Second), c.want)
		}
	}
}
