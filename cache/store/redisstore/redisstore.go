package redisstore

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/kubegitops/gitops/cache/store"
)

// Options configure a Store.
type Options struct {
	// Prefix is prepended to every key, so that several engines (or several
	// caches) share one Redis. Default "gitops:".
	Prefix string
	// DefaultTTL applies when Set is given none. Default 24 h.
	DefaultTTL time.Duration
	// Timeout bounds each operation, whatever the client's own timeouts
	// and retries. Default 500 ms: a slow Redis must cost a miss, not a
	// stalled render.
	Timeout time.Duration
	// Cooldown is how long the store stops asking a Redis that failed:
	// every operation in that time fails at once (a Get is a miss), then
	// one operation tries Redis again. Default 5 s: a frozen Redis costs
	// one Timeout per Cooldown, not one per operation.
	Cooldown time.Duration
	// Registerer receives the store's metrics when not nil; Name is the
	// "store" label. Default "redis".
	Registerer prometheus.Registerer
	Name       string
}

// DefaultOptions returns the defaults described on Options.
func DefaultOptions() Options {
	return Options{Prefix: "gitops:", DefaultTTL: 24 * time.Hour, Timeout: 500 * time.Millisecond, Cooldown: 5 * time.Second, Name: "redis"}
}

// ErrCoolingDown is returned, wrapped, by operations of a Store that
// stopped asking its server after a failure (Options.Cooldown).
var ErrCoolingDown = errors.New("redis store: not asking the server for a while after a failure")

// Store is a store.Store in a Redis server.
type Store struct {
	client  redis.UniversalClient
	opts    Options
	metrics *store.Metrics

	mu        gosync.Mutex
	openUntil time.Time // operations fail at once until then
}

// New returns a Store over client (a *redis.Client, *redis.ClusterClient
// or *redis.Ring). The caller owns the client.
func New(client redis.UniversalClient, opts Options) *Store {
	d := DefaultOptions()
	if opts.Prefix == "" {
		opts.Prefix = d.Prefix
	}
	if opts.DefaultTTL <= 0 {
		opts.DefaultTTL = d.DefaultTTL
	}
	if opts.Timeout <= 0 {
		opts.Timeout = d.Timeout
	}
	if opts.Cooldown <= 0 {
		opts.Cooldown = d.Cooldown
	}
	if opts.Name == "" {
		opts.Name = d.Name
	}
	return &Store{client: client, opts: opts, metrics: store.NewMetrics(opts.Registerer, opts.Name)}
}

// Get implements store.Store. A failure is a miss with the error.
func (r *Store) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := r.bounded(ctx, func(ctx context.Context) error {
		var err error
		v, err = r.client.Get(ctx, r.opts.Prefix+key).Bytes()
		return err
	})
	switch {
	case errors.Is(err, redis.Nil):
		r.metrics.Miss()
		return nil, false, nil
	case err != nil:
		r.metrics.Miss()
		r.metrics.Fail()
		return nil, false, fmt.Errorf("redis store: get: %w", err)
	}
	r.metrics.Hit()
	return v, true, nil
}

// Set implements store.Store.
func (r *Store) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = r.opts.DefaultTTL
	}
	err := r.bounded(ctx, func(ctx context.Context) error {
		return r.client.Set(ctx, r.opts.Prefix+key, value, ttl).Err()
	})
	if err != nil {
		r.metrics.Fail()
		return fmt.Errorf("redis store: set: %w", err)
	}
	return nil
}

// Delete implements store.Store.
func (r *Store) Delete(ctx context.Context, key string) error {
	err := r.bounded(ctx, func(ctx context.Context) error {
		return r.client.Del(ctx, r.opts.Prefix+key).Err()
	})
	if err != nil {
		r.metrics.Fail()
		return fmt.Errorf("redis store: delete: %w", err)
	}
	return nil
}

// bounded runs op and returns within Timeout whatever the client does.
// go-redis ignores a context's deadline while it reads a reply unless the
// client was built with ContextTimeoutEnabled, and then retries: with a
// default client, a Redis that accepts connections but never answers
// (frozen, overloaded, behind a dead proxy) stalled every operation for
// the client's read timeout times its retries (15 s), not Timeout. So op
// runs on its own goroutine; past Timeout the caller gets the deadline
// error and op ends in the background within the client's own timeouts.
//
// After a failure the store cools down: for Cooldown every operation fails
// at once with ErrCoolingDown, so a dead or frozen Redis costs one
// Timeout per Cooldown instead of one per operation (and background
// operations cannot pile up).
func (r *Store) bounded(ctx context.Context, op func(context.Context) error) error {
	r.mu.Lock()
	cooling := time.Now().Before(r.openUntil)
	r.mu.Unlock()
	if cooling {
		return ErrCoolingDown
	}
	octx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- op(octx) }()
	var err error
	select {
	case err = <-done:
	case <-octx.Done():
		err = octx.Err()
	}
	if err != nil && !errors.Is(err, redis.Nil) && ctx.Err() == nil {
		// The server failed, not the caller: stop asking it for a while.
		r.mu.Lock()
		r.openUntil = time.Now().Add(r.opts.Cooldown)
		r.mu.Unlock()
	}
	return err
}
