package git

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops/source"
)

// TestPollerOverGitServer: a Poller over this Source reports the first
// revision of three refs and then a push, with one ls-remote per poll of
// the repository whatever the number of refs.
func TestPollerOverGitServer(t *testing.T) {
	f := newFixture(t)
	s := newSource(t, func(o *Options) { o.ResolveTTL = time.Hour })
	var mu sync.Mutex
	var events []source.Event
	p := source.NewPoller(s, source.PollerOptions{Interval: time.Hour, OnChange: func(e source.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}})
	for _, ref := range []string{"main", "feature", "~1.4"} {
		p.Watch(f.repo, ref)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v", err)
		}
	}()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(events) }
	waitUntil(t, "three first events", func() bool { return count() == 3 })
	first := f.srv.infoRefs.Load()
	if first != 1 {
		t.Fatalf("first poll of 3 refs cost %d ls-remotes", first)
	}

	f.work.write(map[string]string{"pushed": "x"})
	pushed := f.work.commit("pushed")
	f.work.publish()
	p.Trigger("http://" + f.srv.srv.Listener.Addr().String() + "/app") // another spelling of the URL
	waitUntil(t, "push event", func() bool { return count() == 4 })
	mu.Lock()
	e := events[3]
	mu.Unlock()
	if e.Ref != "main" || e.Previous.Commit != f.second || e.Current.Commit != pushed {
		t.Fatalf("push event = %+v", e)
	}
	if n := f.srv.infoRefs.Load() - first; n != 1 {
		t.Fatalf("one triggered poll of 3 refs cost %d ls-remotes, want 1", n)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 20*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
