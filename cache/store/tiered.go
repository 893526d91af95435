package store

import (
	"context"
	"errors"
	"time"
)

// Tiered reads from Near first and falls back to Far, copying what Far
// finds into Near; writes go to both. Typically Near is a Memory and Far a
// Redis shared by replicas.
type Tiered struct {
	// Near is read first and filled from Far on a miss; Far is the shared
	// store every Set also writes.
	Near, Far Store
	// NearTTL is the TTL of entries copied from Far. Default: Near's own.
	NearTTL time.Duration
}

// Get implements Store.
func (t Tiered) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if v, ok, err := t.Near.Get(ctx, key); ok && err == nil {
		return v, true, nil
	}
	v, ok, err := t.Far.Get(ctx, key)
	if !ok || err != nil {
		return nil, false, err
	}
	_ = t.Near.Set(ctx, key, v, t.NearTTL)
	return v, true, nil
}

// Set implements Store; both tiers are written even if one fails.
func (t Tiered) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return errors.Join(t.Near.Set(ctx, key, value, ttl), t.Far.Set(ctx, key, value, ttl))
}

// Delete implements Store.
func (t Tiered) Delete(ctx context.Context, key string) error {
	return errors.Join(t.Near.Delete(ctx, key), t.Far.Delete(ctx, key))
}
