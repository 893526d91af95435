package main

import (
	"context"
	gosync "sync"

	"github.com/kubegitops/gitops/state"
)

// readOnlyState is the state store of a command that only reads or acts
// once (status, diff, render, a one-off sync): it reads the state a host
// keeps (an agent's history and last operation) and keeps every write of
// its own in memory, so that running it leaves nothing in the cluster.
type readOnlyState struct {
	kept state.Store
	mu   gosync.Mutex
	// own holds what this process saved; a nil entry is an app it
	// deleted.
	own map[string]*state.AppState
}

func newReadOnlyState(kept state.Store) *readOnlyState {
	return &readOnlyState{kept: kept, own: map[string]*state.AppState{}}
}

// Load implements state.Store: this process's own state of app,
// else the kept one.
func (s *readOnlyState) Load(ctx context.Context, app string) (state.AppState, error) {
	s.mu.Lock()
	st, ok := s.own[app]
	s.mu.Unlock()
	if !ok {
		return s.kept.Load(ctx, app)
	}
	if st == nil {
		return state.AppState{}, nil
	}
	return *st, nil
}

// Save implements state.Store in memory only.
func (s *readOnlyState) Save(_ context.Context, app string, st state.AppState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.own[app] = &st
	return nil
}

// Delete implements state.Store in memory only.
func (s *readOnlyState) Delete(_ context.Context, app string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.own[app] = nil
	return nil
}
