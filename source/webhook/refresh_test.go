package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops/source"
)

// countingResolver stands in for a Git source: the test is about the
// wiring from a verified webhook to a poll, not about Git.
type countingResolver struct {
	mu          sync.Mutex
	resolves    int
	invalidated []string
}

func (c *countingResolver) Resolve(context.Context, source.Repository, string) (source.Revision, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resolves++
	return source.Revision{Commit: "c", Ref: "refs/heads/main"}, nil
}

func (c *countingResolver) Invalidate(r source.Repository) {
	c.mu.Lock()
	c.invalidated = append(c.invalidated, r.URL)
	c.mu.Unlock()
}

func TestRefreshTriggersThePollerOfTheNamedRepository(t *testing.T) {
	res := &countingResolver{}
	p := source.NewPoller(res, source.PollerOptions{Interval: time.Hour})
	p.Watch(source.Repository{URL: "git@github.com:baxterthehacker/public-repo.git"}, "main")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = p.Run(ctx) }()
	count := func() int { res.mu.Lock(); defer res.mu.Unlock(); return res.resolves }
	poll := func(n int) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true,
			func(context.Context) (bool, error) { return count() >= n, nil }); err != nil {
			t.Fatalf("waiting for poll %d: %v", n, err)
		}
	}
	poll(1)

	h := NewHandler(Options{Secrets: map[Provider][]string{GitHub: {secret}}, OnPush: Refresh(p, res)})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(GitHub, "push", fixture(t, "github_push.json"), secret))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	poll(2)
	res.mu.Lock()
	defer res.mu.Unlock()
	if len(res.invalidated) < 3 { // one per URL in the payload, plus the poll's own
		t.Fatalf("invalidated %v", res.invalidated)
	}
}
