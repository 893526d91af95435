package source

import (
	"container/heap"
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"k8s.io/apimachinery/pkg/util/wait"
)

// PollerOptions configure a Poller. Start from DefaultPollerOptions.
type PollerOptions struct {
	// Interval between two polls of one repository. Default 3 min (Argo
	// CD's reconciliation timeout).
	Interval time.Duration
	// Jitter is the largest random delay added to each scheduled poll, so
	// that many repositories do not poll in step. Default Interval/10.
	Jitter time.Duration
	// MaxBackoff caps the delay after errors. After n consecutive failed
	// polls of repositories on one host, that host is left alone for
	// Interval·2^(n-1), at most MaxBackoff. Default 10 min.
	MaxBackoff time.Duration
	// Concurrency is the number of repositories polled at once. Default 4.
	Concurrency int
	// OnChange receives one Event per watched (repository, ref) when it
	// first resolves and whenever its revision changes. It is called from
	// the Poller's goroutines, never concurrently for one target.
	OnChange func(Event)
	// Logger receives poll errors (V(0)) and polls (V(1)).
	Logger logr.Logger
}

// DefaultPollerOptions returns a 3 min interval with 18 s jitter, 10 min
// maximum backoff and 4 concurrent polls.
func DefaultPollerOptions() PollerOptions {
	return PollerOptions{Interval: 3 * time.Minute, Jitter: 18 * time.Second, MaxBackoff: 10 * time.Minute,
		Concurrency: 4, Logger: logr.Discard()}
}

// Event reports a watched ref's new revision.
type Event struct {
	// Repository is the repository as given to the first Watch of it.
	Repository Repository
	// Ref is the revision as given to Watch ("main", "~1.4").
	Ref string
	// Previous is the revision before; zero on the first resolution.
	Previous Revision
	// Current is the newly resolved revision.
	Current Revision
}

// Invalidator is implemented by resolvers that cache (source/git.Source):
// the Poller calls Invalidate once per poll of a repository, so one poll
// costs one fresh listing of the repository whatever the number of refs
// watched on it.
type Invalidator interface {
	Invalidate(repo Repository)
}

// Poller watches many (repository, ref) pairs and reports revision changes.
//
// Rules: watches are deduplicated by RepositoryKey, credentials and ref (a
// second Watch of the same pair adds a reference, not a poll; the same
// repository watched with other credentials is polled with those, so one
// tenant's credentials never serve another's watch); refs of one repository
// (and identity) are polled together, once per Interval plus jitter, with one invalidation of
// the resolver's cache; a failed poll backs off the whole host (see
// MaxBackoff), and a successful one resets it; Trigger polls a repository
// now (for webhook hints). It starts polling when Run is called.
type Poller struct {
	resolver Resolver
	opts     PollerOptions
	now      func() time.Time
	jitter   func(time.Duration) time.Duration

	mu    sync.Mutex
	repos map[string]*pollRepo
	hosts map[string]*hostBackoff
	queue pollQueue
	wake  chan struct{}
}

type pollRepo struct {
	key     string
	repoKey string
	host    string
	repo    Repository
	refs    map[string]*pollRef
	next    time.Time
	index   int // in queue; -1 when not queued
	polling bool
	// again asks for another poll right after the one in flight.
	again bool
	// forced skips the host's backoff once (Trigger, a new ref).
	forced bool
}

type pollRef struct {
	users   int
	current Revision
}

type hostBackoff struct {
	failures int
	backoff  wait.Backoff // Interval doubling up to MaxBackoff
	until    time.Time
}

// NewPoller returns a Poller over resolver; zero options take their
// defaults.
func NewPoller(resolver Resolver, opts PollerOptions) *Poller {
	def := DefaultPollerOptions()
	if opts.Interval <= 0 {
		opts.Interval = def.Interval
		if opts.Jitter == 0 {
			opts.Jitter = def.Jitter
		}
	}
	if opts.Jitter < 0 {
		opts.Jitter = 0
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = def.MaxBackoff
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = def.Concurrency
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = def.Logger
	}
	return &Poller{
		resolver: resolver, opts: opts, now: time.Now,
		jitter: func(max time.Duration) time.Duration {
			if max <= 0 {
				return 0
			}
			return rand.N(max)
		},
		repos: map[string]*pollRepo{}, hosts: map[string]*hostBackoff{},
		wake: make(chan struct{}, 1),
	}
}

// Watch adds (repo, ref) and schedules a poll of repo now. The returned
// function removes this watch; the pair stops being polled when its last
// watch is removed.
func (p *Poller) Watch(repo Repository, ref string) (unwatch func()) {
	repoKey := RepositoryKey(repo.URL)
	key := repoKey + "\x00" + repo.Credentials.identity()
	p.mu.Lock()
	r, ok := p.repos[key]
	if !ok {
		r = &pollRepo{key: key, repoKey: repoKey, host: hostOf(repoKey), repo: repo, refs: map[string]*pollRef{}, index: -1}
		p.repos[key] = r
	}
	pr, ok := r.refs[ref]
	if !ok {
		pr = &pollRef{}
		r.refs[ref] = pr
		r.forced = true
		p.scheduleLocked(r, p.now())
	}
	pr.users++
	p.mu.Unlock()
	p.signal()
	var once sync.Once
	return func() { once.Do(func() { p.unwatch(key, ref) }) }
}

func (p *Poller) unwatch(key, ref string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.repos[key]
	if !ok {
		return
	}
	if pr, ok := r.refs[ref]; ok {
		pr.users--
		if pr.users <= 0 {
			delete(r.refs, ref)
		}
	}
	if len(r.refs) == 0 {
		if r.index >= 0 {
			heap.Remove(&p.queue, r.index)
		}
		delete(p.repos, key)
	}
}

// Trigger polls the repository with this URL now (any URL form that maps
// to the same RepositoryKey, under every identity watching it), ignoring
// the host's backoff. It reports whether the repository is watched.
func (p *Poller) Trigger(repoURL string) bool {
	repoKey := RepositoryKey(repoURL)
	found := false
	p.mu.Lock()
	for _, r := range p.repos {
		if r.repoKey == repoKey {
			found = true
			r.forced = true
			p.scheduleLocked(r, p.now())
		}
	}
	p.mu.Unlock()
	if found {
		p.signal()
	}
	return found
}

// Run polls until ctx ends, then waits for polls in flight and returns
// ctx.Err().
func (p *Poller) Run(ctx context.Context) error {
	sem := make(chan struct{}, p.opts.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		due, wait := p.nextDue()
		if due != nil {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				p.requeue(due)
				return ctx.Err()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				p.poll(ctx, due)
				p.signal() // the repository is queued again

			}()
			continue
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// nextDue pops a repository whose time has come, or says how long to wait.
func (p *Poller) nextDue() (*pollRepo, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		return nil, time.Hour
	}
	r := p.queue[0]
	if wait := r.next.Sub(p.now()); wait > 0 {
		return nil, wait
	}
	heap.Pop(&p.queue)
	if b := p.hosts[r.host]; b != nil && !r.forced && p.now().Before(b.until) {
		// The host is backing off: come back when it ends.
		r.next = b.until.Add(p.jitter(p.opts.Jitter))
		heap.Push(&p.queue, r)
		return nil, 0
	}
	r.polling, r.forced = true, false
	return r, 0
}

func (p *Poller) requeue(r *pollRepo) {
	p.mu.Lock()
	r.polling = false
	if _, ok := p.repos[r.key]; ok {
		p.scheduleLocked(r, p.now())
	}
	p.mu.Unlock()
}

// poll resolves every watched ref of r once.
func (p *Poller) poll(ctx context.Context, r *pollRepo) {
	p.mu.Lock()
	refs := make([]string, 0, len(r.refs))
	for ref := range r.refs {
		refs = append(refs, ref)
	}
	repo := r.repo
	p.mu.Unlock()

	if inv, ok := p.resolver.(Invalidator); ok {
		inv.Invalidate(repo)
	}
	failed := false
	for _, ref := range refs {
		rev, err := p.resolver.Resolve(ctx, repo, ref)
		if err != nil {
			if ctx.Err() == nil {
				p.opts.Logger.Error(err, "poll failed", "repository", repo.String(), "ref", ref)
			}
			failed = true
			continue
		}
		p.opts.Logger.V(1).Info("polled", "repository", repo.String(), "ref", ref, "commit", rev.Commit)
		p.mu.Lock()
		pr, ok := r.refs[ref]
		var prev Revision
		changed := ok && pr.current != rev
		if changed {
			prev, pr.current = pr.current, rev
		}
		p.mu.Unlock()
		if changed && p.opts.OnChange != nil {
			p.opts.OnChange(Event{Repository: repo, Ref: ref, Previous: prev, Current: rev})
		}
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	r.polling = false
	b := p.hosts[r.host]
	if failed && r.again {
		r.again = false // a failing repository is not hammered by triggers
	}
	delay := p.opts.Interval
	if failed && ctx.Err() == nil {
		if b == nil {
			b = &hostBackoff{backoff: wait.Backoff{Duration: min(p.opts.Interval, p.opts.MaxBackoff), Factor: 2, Cap: p.opts.MaxBackoff, Steps: math.MaxInt32}}
			p.hosts[r.host] = b
		}
		b.failures++
		back := b.backoff.Step()
		b.until = p.now().Add(back)
		delay = back
	} else if !failed {
		delete(p.hosts, r.host)
	}
	if r.again {
		r.again = false
		delay = 0
	}
	if _, ok := p.repos[r.key]; ok && r.index < 0 {
		p.scheduleLocked(r, p.now().Add(delay))
	}
}

// scheduleLocked (re)queues r at t plus jitter; a repository already due
// sooner keeps its time. A repository being polled is rescheduled when its
// poll ends, unless this asks for an earlier poll.
func (p *Poller) scheduleLocked(r *pollRepo, t time.Time) {
	if r.polling {
		r.again = true
		return
	}
	t = t.Add(p.jitter(p.opts.Jitter))
	if r.index >= 0 {
		if t.Before(r.next) {
			r.next = t
			heap.Fix(&p.queue, r.index)
		}
		return
	}
	r.next = t
	heap.Push(&p.queue, r)
}

func (p *Poller) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// hostOf returns the host part of a RepositoryKey.
func hostOf(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i]
		}
	}
	return key
}

// pollQueue is a min-heap of repositories by next poll time.
type pollQueue []*pollRepo

// Len implements heap.Interface.
func (q pollQueue) Len() int { return len(q) }

// Less implements heap.Interface.
func (q pollQueue) Less(i, j int) bool { return q[i].next.Before(q[j].next) }

// Swap implements heap.Interface.
func (q pollQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}

// Push implements heap.Interface.
func (q *pollQueue) Push(x any) {
	r := x.(*pollRepo)
	r.index = len(*q)
	*q = append(*q, r)
}

// Pop implements heap.Interface.
func (q *pollQueue) Pop() any {
	old := *q
	r := old[len(old)-1]
	old[len(old)-1] = nil
	r.index = -1
	*q = old[:len(old)-1]
	return r
}
