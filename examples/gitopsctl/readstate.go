package main

import (
	"context"
	gosync "sync"

	"github.com/kubegitops/gitops"
)

// readOnlyState is the state store of a command that only reads or acts
// once (status, diff, render, a one-off sync): it reads the state a host
// keeps (an agent's history and last operation) and keeps every write of
// its own in memory, so that running it leaves nothing in the cluster.
type readOnlyState struct {
	kept gitops.StateStore
	mu   gosync.Mutex
	// own holds what this process saved; a nil entry is an app it
	// deleted.
	own map[string]*gitops.AppState
}

func newReadOnlyState(kept gitops.StateStore) *readOnlyState {
	return &readOnlyState{kept: kept, own: map[string]*gitops.AppState{}}
}

// Load implements gitops.StateStore: this process's own state of app,
// else the kept one.
func (s *readOnlyState) Load(ctx context.Context, app string) (gitops.AppState, error) {
	s.mu.Lock()
	st, ok := s.own[app]
	s.mu.Unlock()
	if !ok {
		return s.kept.Load(ctx, app)
	}
	if st == nil {
		return gitops.AppState{}, nil
	}
	return *st, nil
}

// Save implements gitops.StateStore in memory only.
func (s *readOnlyState) Save(_ context.Context, app string, st gitops.AppState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.own[app] = &st
	return nil
}

// Delete implements gitops.StateStore in memory only.
func (s *readOnlyState) Delete(_ context.Context, app string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.own[app] = nil
	return nil
}
