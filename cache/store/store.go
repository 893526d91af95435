package store

import (
	"context"
	"time"
)

// Store is a byte store with per-entry expiry. Implementations are safe for
// concurrent use. A Get that fails returns found == false together with the
// error: callers treat it as a miss.
type Store interface {
	// Get returns the value under key and whether it was found.
	Get(ctx context.Context, key string) (value []byte, found bool, err error)
	// Set stores value under key for ttl (zero or negative: the store's
	// default TTL). The store may keep its own copy or keep value: callers
	// must not modify value after Set.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}
