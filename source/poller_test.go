package source

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// scriptedResolver answers from a table and counts calls per repository
// key. It stands in for a Git server only to produce failures and
// answers on demand; source/git has the test against a real server.
type scriptedResolver struct {
	mu          sync.Mutex
	commits     map[string]string // RepositoryKey + " " + ref -> commit
	failHosts   map[string]bool
	calls       map[string]int
	invalidates atomic.Int64
}

func newScripted() *scriptedResolver {
	return &scriptedResolver{commits: map[string]string{}, failHosts: map[string]bool{}, calls: map[string]int{}}
}

func (s *scriptedResolver) Resolve(_ context.Context, repo Repository, ref string) (Revision, error) {
	key := RepositoryKey(repo.URL)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[key]++
	if s.failHosts[hostOf(key)] {
		return Revision{}, errors.New("connection refused")
	}
	c, ok := s.commits[key+" "+ref]
	if !ok {
		return Revision{}, ErrRevisionNotFound
	}
	return Revision{Commit: c, Ref: "refs/heads/" + ref}, nil
}

func (s *scriptedResolver) Invalidate(Repository) { s.invalidates.Add(1) }

func (s *scriptedResolver) set(key, ref, commit string) {
	s.mu.Lock()
	s.commits[key+" "+ref] = commit
	s.mu.Unlock()
}

func (s *scriptedResolver) count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[key]
}

type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) { l.mu.Lock(); l.events = append(l.events, e); l.mu.Unlock() }
func (l *eventLog) snapshot() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func startPoller(t *testing.T, p *Poller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	})
}

func TestPollerDeduplicatesAndReportsChanges(t *testing.T) {
	res := newScripted()
	res.set("github.com/org/repo", "main", "c1")
	var log eventLog
	p := NewPoller(res, PollerOptions{Interval: time.Hour, OnChange: log.add})
	// Three spellings of one repository and a repeated ref: one target.
	u1 := p.Watch(Repository{URL: "https://github.com/org/repo.git"}, "main")
	u2 := p.Watch(Repository{URL: "git@github.com:org/repo"}, "main")
	u3 := p.Watch(Repository{URL: "ssh://git@GitHub.com/org/repo/"}, "main")
	startPoller(t, p)
	waitFor(t, "first event", func() bool { return len(log.snapshot()) == 1 })
	if e := log.snapshot()[0]; !e.Previous.IsZero() || e.Current.Commit != "c1" || e.Ref != "main" {
		t.Fatalf("first event = %+v", e)
	}
	if n := res.count("github.com/org/repo"); n != 1 {
		t.Fatalf("3 watches of one pair cost %d resolves, want 1", n)
	}
	// A push, then a webhook hint in another URL form: one more poll.
	res.set("github.com/org/repo", "main", "c2")
	if !p.Trigger("https://github.com/org/repo") {
		t.Fatal("Trigger did not find the watched repository")
	}
	waitFor(t, "change event", func() bool { return len(log.snapshot()) == 2 })
	if e := log.snapshot()[1]; e.Previous.Commit != "c1" || e.Current.Commit != "c2" {
		t.Fatalf("change event = %+v", e)
	}
	// An unchanged poll emits nothing.
	p.Trigger("https://github.com/org/repo")
	waitFor(t, "third poll", func() bool { return res.count("github.com/org/repo") == 3 })
	if n := len(log.snapshot()); n != 2 {
		t.Fatalf("unchanged poll emitted an event (%d events)", n)
	}
	if res.invalidates.Load() != 3 {
		t.Fatalf("invalidations = %d, want one per poll (3)", res.invalidates.Load())
	}
	// The same repository under other credentials is another target,
	// polled with its own credentials.
	u4 := p.Watch(Repository{URL: "https://github.com/org/repo", Credentials: &Credentials{BearerToken: "other-tenant"}}, "main")
	waitFor(t, "poll under the second identity", func() bool { return res.count("github.com/org/repo") == 4 })
	if n := len(log.snapshot()); n != 3 {
		t.Fatalf("second identity's first resolution: %d events, want 3", n)
	}
	u4()
	u1()
	u2()
	u3()
	if p.Trigger("https://github.com/org/repo") {
		t.Fatal("repository still watched after its last unwatch")
	}
}

func TestPollerRefsOfOneRepositoryPollTogether(t *testing.T) {
	res := newScripted()
	for _, ref := range []string{"a", "b", "c"} {
		res.set("example.com/r", ref, "c-"+ref)
	}
	var log eventLog
	p := NewPoller(res, PollerOptions{Interval: time.Hour, OnChange: log.add})
	for _, ref := range []string{"a", "b", "c"} {
		p.Watch(Repository{URL: "https://example.com/r"}, ref)
	}
	startPoller(t, p)
	waitFor(t, "three events", func() bool { return len(log.snapshot()) == 3 })
	if n := res.invalidates.Load(); n > 3 || n < 1 {
		t.Fatalf("invalidations = %d", n)
	}
}

func TestPollerBacksOffPerHost(t *testing.T) {
	res := newScripted()
	res.failHosts["down.example"] = true
	res.set("up.example/r", "main", "c1")
	p := NewPoller(res, PollerOptions{Interval: 10 * time.Millisecond, Jitter: -1, MaxBackoff: 10 * time.Second})
	p.Watch(Repository{URL: "https://down.example/r"}, "main")
	p.Watch(Repository{URL: "https://down.example/other"}, "main")
	p.Watch(Repository{URL: "https://up.example/r"}, "main")
	startPoller(t, p)
	// The healthy host keeps its pace while the failing one backs off
	// exponentially (10, 20, 40, 80 ms, ... up to 10 s).
	waitFor(t, "30 healthy polls", func() bool { return res.count("up.example/r") >= 30 })
	down := res.count("down.example/r") + res.count("down.example/other")
	if down > 14 {
		t.Fatalf("failing host polled %d times while the healthy one polled 30 times", down)
	}
	p.mu.Lock()
	b := p.hosts["down.example"]
	p.mu.Unlock()
	if b == nil || b.failures < 3 {
		t.Fatalf("host backoff state = %+v, want at least 3 failures", b)
	}
	// Recovery resets the backoff.
	res.set("down.example/r", "main", "c1")
	res.set("down.example/other", "main", "c1")
	res.mu.Lock()
	res.failHosts["down.example"] = false
	res.mu.Unlock()
	p.Trigger("https://down.example/r")
	waitFor(t, "backoff reset", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.hosts["down.example"] == nil
	})
}
