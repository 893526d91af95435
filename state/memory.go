package state

import (
	"context"
	"encoding/json"
	gosync "sync"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// MemoryStore keeps app state in memory, for the life of the process
// (the default Store).
type MemoryStore struct {
	mu   gosync.Mutex
	apps map[string]AppState
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{apps: map[string]AppState{}}
}

// Load implements Store.
func (m *MemoryStore) Load(_ context.Context, key string) (AppState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return copyAppState(m.apps[key]), nil
}

// Save implements Store.
func (m *MemoryStore) Save(_ context.Context, key string, st AppState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.apps[key] = copyAppState(st)
	return nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.apps, key)
	return nil
}

// copyAppState copies the slices and the operation, so that callers never
// share memory with the store.
func copyAppState(st AppState) AppState {
	out := st
	out.History = append([]appstatus.HistoryEntry(nil), st.History...)
	if st.Operation != nil {
		op := *st.Operation
		op.Results = append([]sync.ResourceResult(nil), op.Results...)
		if op.Request != nil {
			rq := *op.Request
			rq.Revisions = append([]string(nil), rq.Revisions...)
			rq.Resources = append([]resource.Key(nil), rq.Resources...)
			rq.SyncOptions = append([]string(nil), rq.SyncOptions...)
			op.Request = &rq
		}
		if op.Checkpoint != nil {
			cp := *op.Checkpoint
			cp.Tasks = make(map[string]sync.TaskState, len(op.Checkpoint.Tasks))
			for k, v := range op.Checkpoint.Tasks {
				cp.Tasks[k] = v
			}
			op.Checkpoint = &cp
		}
		out.Operation = &op
	}
	if st.ImageOverride != nil {
		out.ImageOverride = append(json.RawMessage(nil), st.ImageOverride...)
	}
	return out
}
