package render

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops/cache/store"
)

// CacheOptions configure a CachedRenderer.
type CacheOptions struct {
	// TTL of rendered output (and of the recorded dependency lists).
	// Default 24 h: entries are content-addressed, so the TTL only bounds
	// storage.
	TTL time.Duration
	// MaxConcurrent bounds the renders that run at once (cache hits are not
	// bounded). Default runtime.GOMAXPROCS(0).
	MaxConcurrent int
	// FailureBackoff is how long a failed render's error is served from the
	// cache after the first failure; it doubles with each consecutive
	// failure of the same inputs, up to MaxFailureBackoff. Defaults 10 s
	// and 1 h. Refresh bypasses it.
	FailureBackoff    time.Duration
	MaxFailureBackoff time.Duration
	// KeyPrefix is prepended to every store key. Default "render/".
	KeyPrefix string
	// DecodedEntries is how many decoded outputs are kept in process in
	// front of the store, so that a hit costs a deep copy instead of a
	// decode. Default 256; negative disables.
	DecodedEntries int
	// DecodedTTL is how long a decoded output is kept after its last use:
	// the copies serve renders in quick succession (a refresh and the
	// sync it leads to, apps sharing a chart), and an engine that stops
	// rendering holds none. Default 1 min.
	DecodedTTL time.Duration
	// Private holds the outputs that must not leave the process: those
	// of renders that decrypted a file (see Decrypting). Default an
	// in-memory LRU of 64 MiB. It must not be a shared store.
	Private store.Store
	// Registerer receives the metrics when not nil.
	Registerer prometheus.Registerer
	// Logger logs store errors (which never fail a render).
	Logger logr.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DefaultCacheOptions returns the defaults described on CacheOptions.
func DefaultCacheOptions() CacheOptions {
	return CacheOptions{
		TTL:               24 * time.Hour,
		MaxConcurrent:     runtime.GOMAXPROCS(0),
		FailureBackoff:    10 * time.Second,
		MaxFailureBackoff: time.Hour,
		KeyPrefix:         "render/",
		DecodedEntries:    256,
		DecodedTTL:        time.Minute,
		Logger:            logr.Discard(),
		Now:               time.Now,
	}
}

// CachedRenderer renders through a content-addressed cache. See Cached.
type CachedRenderer struct {
	next    Renderer
	store   store.Store
	opts    CacheOptions
	slots   chan struct{}
	group   singleflight.Group
	metrics *cacheMetrics
	// decoded holds decoded outputs by full key (nil when
	// DecodedEntries is negative); callers get deep copies.
	decoded *decodedCache

	mu       sync.Mutex
	failures map[string]*failure
}

// failure is a render that failed, remembered with the digest of the
// inputs it read so that only the same inputs get the same error back.
type failure struct {
	full  string
	deps  []dependency
	err   error
	count int
	until time.Time
	// backoff is FailureBackoff doubling up to MaxFailureBackoff; each
	// failure of the same inputs takes its next step.
	backoff wait.Backoff
}

// FailedRenderError is returned instead of rendering again while a failed
// render of the same inputs is backing off. It wraps the original error.
type FailedRenderError struct {
	// Err is the failed render's error.
	Err error
	// Until is when the inputs may be rendered again.
	Until time.Time
	// Count counts the failures of these inputs in a row.
	Count int
}

// Error implements error.
func (e *FailedRenderError) Error() string {
	return fmt.Sprintf("%v (cached failure %d, retried after %s)", e.Err, e.Count, e.Until.UTC().Format(time.RFC3339))
}

// Unwrap returns the original error.
func (e *FailedRenderError) Unwrap() error { return e.Err }

// Cached returns a renderer that serves next's output from st when none of
// the render's inputs changed.
//
// The key of a render is SHA-256 over: a format version; the renderer's
// Identity (tool, library version, every renderer option, canonically
// JSON-encoded); every field of the Input but FS (app path and name,
// namespace, kube version, API versions, tool options); the tree hash of the
// application path; and, for every other path the previous render of the
// same request read (values files, bases, components, libraries, and every
// stat and directory listing on the way), a digest of what was read. Those
// paths are recorded by passing the renderer a recording FS, and stored next
// to the output, so a commit that touches none of them is a hit even if the
// commit hash changed, and a commit that touches any of them is a miss.
//
// Identical concurrent renders run once (a follower checks that the
// leader's inputs are its own). A failed render is remembered and its error
// returned without rendering while it backs off (FailureBackoff doubling
// up to MaxFailureBackoff); Refresh bypasses the cache. At most
// MaxConcurrent renders run at once; gitops_render_pending counts those
// waiting. A store that fails is a miss: the error is logged and counted,
// never returned. A renderer that is not an Identifier is not cached.
func Cached(next Renderer, st store.Store, opts CacheOptions) *CachedRenderer {
	d := DefaultCacheOptions()
	if opts.TTL <= 0 {
		opts.TTL = d.TTL
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = d.MaxConcurrent
	}
	if opts.FailureBackoff <= 0 {
		opts.FailureBackoff = d.FailureBackoff
	}
	if opts.MaxFailureBackoff <= 0 {
		opts.MaxFailureBackoff = d.MaxFailureBackoff
	}
	if opts.KeyPrefix == "" {
		opts.KeyPrefix = d.KeyPrefix
	}
	if opts.DecodedEntries == 0 {
		opts.DecodedEntries = d.DecodedEntries
	}
	if opts.DecodedTTL <= 0 {
		opts.DecodedTTL = d.DecodedTTL
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = d.Logger
	}
	if opts.Now == nil {
		opts.Now = d.Now
	}
	if opts.Private == nil {
		mo := store.DefaultMemoryOptions()
		mo.MaxBytes, mo.Name = 64<<20, "render-private"
		opts.Private = store.NewMemory(mo)
	}
	return &CachedRenderer{
		decoded:  newDecodedCache(opts.DecodedEntries, opts.DecodedTTL, opts.Now),
		next:     next,
		store:    st,
		opts:     opts,
		slots:    make(chan struct{}, opts.MaxConcurrent),
		metrics:  newCacheMetrics(opts.Registerer),
		failures: map[string]*failure{},
	}
}

// Render returns the cached output for in, rendering on a miss. The
// objects returned are the caller's own: no cache entry or renderer holds
// them.
func (c *CachedRenderer) Render(ctx context.Context, in Input) ([]*unstructured.Unstructured, error) {
	return c.render(ctx, in, false)
}

// Refresh renders in even if a cached output or a cached failure exists,
// and caches the new result.
func (c *CachedRenderer) Refresh(ctx context.Context, in Input) ([]*unstructured.Unstructured, error) {
	return c.render(ctx, in, true)
}

// Key returns the cache key of in as of now, using the dependency list of
// the last render of the same request; found reports whether that list
// exists (without it, the key covers only the application path).
func (c *CachedRenderer) Key(ctx context.Context, in Input) (key string, found bool, err error) {
	base, err := c.baseKey(in)
	if err != nil {
		return "", false, err
	}
	deps, found := c.loadDeps(ctx, base)
	full, err := fullKey(in.FS, base, deps)
	return full, found, err
}

func (c *CachedRenderer) render(ctx context.Context, in Input, fresh bool) ([]*unstructured.Unstructured, error) {
	if in.FS == nil {
		return nil, &Error{Tool: in.Tool, AppName: in.AppName, Path: in.Path, Err: fmt.Errorf("%w: Input.FS is nil", ErrInvalidInput)}
	}
	if _, ok := c.next.(Identifier); !ok {
		return c.renderUncacheable(ctx, in)
	}
	base, err := c.baseKey(in)
	if errors.Is(err, ErrNotCacheable) {
		return c.renderUncacheable(ctx, in)
	}
	if err != nil {
		return nil, err
	}
	if !fresh {
		if err := c.cachedFailure(base, in); err != nil {
			c.metrics.request("failure")
			return nil, err
		}
		if deps, ok := c.loadDeps(ctx, base); ok {
			if full, err := fullKey(in.FS, base, deps); err == nil {
				if objs, ok := c.loadOutput(ctx, full); ok {
					c.metrics.request("hit")
					return objs, nil
				}
			}
		}
	}
	c.metrics.request("miss")
	flightKey := base
	if fresh {
		flightKey = "fresh/" + base
	}
	v, err, _ := c.group.Do(flightKey, func() (any, error) { return c.renderAndStore(ctx, in, base) })
	res, _ := v.(*flightResult)
	if res == nil {
		return nil, err
	}
	// A follower shares the leader's result only if its own tree has the
	// same content at every path the leader read, and not the leader's
	// cancellation.
	leaderCancelled := err != nil && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
	if full, ferr := fullKey(in.FS, base, res.deps); ferr != nil || full != res.full || leaderCancelled {
		o, rerr := c.renderAndStore(ctx, in, base)
		if o == nil {
			return nil, rerr
		}
		res, err = o, rerr
	}
	if err != nil {
		return nil, err
	}
	return decodeObjects(res.data)
}

// renderUncacheable renders past the cache, returning copies: a renderer
// the cache cannot key may keep what it returned, and the caller's objects
// are its own.
func (c *CachedRenderer) renderUncacheable(ctx context.Context, in Input) ([]*unstructured.Unstructured, error) {
	c.metrics.request("uncacheable")
	objs, err := c.renderBounded(ctx, in)
	if err != nil {
		return nil, err
	}
	return deepCopyObjects(objs), nil
}

type flightResult struct {
	full string
	deps []dependency
	data []byte
}

// renderAndStore renders in through a recording FS and stores the output
// and the dependency list, or remembers the failure.
func (c *CachedRenderer) renderAndStore(ctx context.Context, in Input, base string) (*flightResult, error) {
	rec := newRecordingFS(in.FS)
	rin := in
	rin.FS = rec
	rctx, sensitive := withSensitiveFlag(ctx)
	objs, rerr := c.renderBounded(rctx, rin)
	deps := relevantDependencies(rec.dependencies(), in.Path)
	full, kerr := fullKey(in.FS, base, deps)
	if kerr != nil {
		if rerr != nil {
			return nil, rerr
		}
		return nil, Wrap(in.Tool, in, fmt.Errorf("cache key: %w", kerr))
	}
	if rerr != nil {
		if ctx.Err() == nil && !errors.Is(rerr, context.Canceled) && !errors.Is(rerr, context.DeadlineExceeded) {
			c.rememberFailure(base, full, deps, rerr)
		}
		return &flightResult{full: full, deps: deps}, rerr
	}
	c.forgetFailure(base)
	data, err := encodeObjects(objs)
	if err != nil {
		return nil, Wrap(in.Tool, in, fmt.Errorf("encode output: %w", err))
	}
	c.storeDeps(ctx, base, deps)
	if sensitive.Load() {
		// Plaintext from a decryptor: this process only.
		if err := c.opts.Private.Set(ctx, c.opts.KeyPrefix+"out/"+full, data, c.opts.TTL); err != nil {
			c.opts.Logger.Error(err, "render cache: private store write failed", "key", full)
		}
	} else {
		c.storeSet(ctx, c.opts.KeyPrefix+"out/"+full, data)
	}
	return &flightResult{full: full, deps: deps, data: data}, nil
}

func (c *CachedRenderer) renderBounded(ctx context.Context, in Input) ([]*unstructured.Unstructured, error) {
	c.metrics.pending(1)
	select {
	case c.slots <- struct{}{}:
		c.metrics.pending(-1)
	case <-ctx.Done():
		c.metrics.pending(-1)
		return nil, ctx.Err()
	}
	defer func() { <-c.slots }()
	start := c.opts.Now()
	objs, err := c.next.Render(ctx, in)
	c.metrics.observe(c.opts.Now().Sub(start), err)
	return objs, err
}

func (c *CachedRenderer) cachedFailure(base string, in Input) error {
	c.mu.Lock()
	f := c.failures[base]
	c.mu.Unlock()
	if f == nil || !c.opts.Now().Before(f.until) {
		return nil
	}
	if full, err := fullKey(in.FS, base, f.deps); err != nil || full != f.full {
		return nil
	}
	return &FailedRenderError{Err: f.err, Until: f.until, Count: f.count}
}

func (c *CachedRenderer) rememberFailure(base, full string, deps []dependency, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.failures[base]
	if f == nil || f.full != full {
		f = &failure{}
		c.failures[base] = f
	}
	f.full, f.deps, f.err = full, deps, err
	if f.count == 0 {
		maxB := c.opts.MaxFailureBackoff
		f.backoff = wait.Backoff{Duration: min(c.opts.FailureBackoff, maxB), Factor: 2, Cap: maxB, Steps: math.MaxInt32}
	}
	f.count++
	f.until = c.opts.Now().Add(f.backoff.Step())
}

func (c *CachedRenderer) forgetFailure(base string) {
	c.mu.Lock()
	delete(c.failures, base)
	c.mu.Unlock()
}

func (c *CachedRenderer) storeSet(ctx context.Context, key string, data []byte) {
	if err := c.store.Set(ctx, key, data, c.opts.TTL); err != nil {
		c.metrics.storeError()
		c.opts.Logger.Error(err, "render cache: store write failed", "key", key)
	}
}

func (c *CachedRenderer) storeGet(ctx context.Context, key string) ([]byte, bool) {
	v, ok, err := c.store.Get(ctx, key)
	if err != nil {
		c.metrics.storeError()
		c.opts.Logger.Error(err, "render cache: store read failed; treating as a miss", "key", key)
		return nil, false
	}
	return v, ok
}
