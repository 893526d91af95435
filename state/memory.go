package state

import (
	"context"
	"encoding/json"
	"fmt"
	gosync "sync"
)

// MemoryStore keeps app state in memory, for the life of the process
// (the default Store). It keeps each app's state as the JSON the
// ConfigMapStore writes, so what Load returns is a copy no caller shares,
// with the same round trip as a state read back from the cluster, and an
// app's state costs one allocation rather than dozens of small ones
// (results, keys, messages) that a fleet would keep for as long as it runs.
type MemoryStore struct {
	mu   gosync.Mutex
	apps map[string][]byte
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{apps: map[string][]byte{}}
}

// Load implements Store.
func (m *MemoryStore) Load(_ context.Context, key string) (AppState, error) {
	m.mu.Lock()
	data, ok := m.apps[key]
	m.mu.Unlock()
	var st AppState
	if !ok {
		return st, nil
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return AppState{}, fmt.Errorf("state of %s: %w", key, err)
	}
	return st, nil
}

// Save implements Store.
func (m *MemoryStore) Save(_ context.Context, key string, st AppState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("state of %s: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.apps[key] = data
	return nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.apps, key)
	return nil
}
