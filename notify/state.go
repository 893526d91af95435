package notify

import (
	"context"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops/cache/store"
)

// State remembers which notifications were sent, so that each is sent
// once per condition change (and once per oncePer value). Keys are
// opaque strings of this package. A host that restarts without sending
// everything again gives the controller a durable State: NewStoreState
// over a Redis store, or its own.
type State interface {
	// Notified reports whether key is recorded as sent.
	Notified(ctx context.Context, key string) (bool, error)
	// SetNotified records key as sent (true) or forgets it (false).
	SetNotified(ctx context.Context, key string, notified bool) error
}

// MemoryState is a State in memory: it forgets everything when the
// process ends. It is the controller's default.
type MemoryState struct {
	mu   gosync.Mutex
	keys map[string]struct{}
}

// NewMemoryState returns an empty MemoryState.
func NewMemoryState() *MemoryState { return &MemoryState{keys: map[string]struct{}{}} }

// Notified implements State.
func (m *MemoryState) Notified(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.keys[key]
	return ok, nil
}

// SetNotified implements State.
func (m *MemoryState) SetNotified(_ context.Context, key string, notified bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if notified {
		m.keys[key] = struct{}{}
	} else {
		delete(m.keys, key)
	}
	return nil
}

// StoreState is a State in a store.Store (cache/store/redisstore.New for one that
// survives restarts and is shared by replicas). Keys are prefixed with
// "notify:" and kept for TTL (zero: the store's default), after which a
// notification still due would be sent again.
type StoreState struct {
	store store.Store
	ttl   time.Duration
}

// NewStoreState returns a State kept in s.
func NewStoreState(s store.Store, ttl time.Duration) *StoreState {
	return &StoreState{store: s, ttl: ttl}
}

// Notified implements State.
func (s *StoreState) Notified(ctx context.Context, key string) (bool, error) {
	_, found, err := s.store.Get(ctx, "notify:"+key)
	return found, err
}

// SetNotified implements State.
func (s *StoreState) SetNotified(ctx context.Context, key string, notified bool) error {
	if notified {
		return s.store.Set(ctx, "notify:"+key, []byte{'1'}, s.ttl)
	}
	return s.store.Delete(ctx, "notify:"+key)
}
