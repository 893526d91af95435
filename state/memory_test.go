package state

import (
	"context"
	"testing"

	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/sync"
)

// TestMemoryStoreKeysAndCopies: two keys keep two states, and what Load
// returns shares no memory with the store.
func TestMemoryStoreKeysAndCopies(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryStore()
	st := AppState{History: []appstatus.HistoryEntry{{ID: 1, Revisions: []string{"a"}}},
		Operation: &OperationState{Phase: sync.Running, Request: &OperationRequest{Revisions: []string{"a"}}}}
	if err := m.Save(ctx, "team-a_web", st); err != nil {
		t.Fatal(err)
	}
	got, _ := m.Load(ctx, "team-a_web")
	got.History[0].ID = 9
	again, _ := m.Load(ctx, "team-a_web")
	if again.History[0].ID != 1 || !again.Operation.Resumable() {
		t.Fatalf("the store shares memory with a caller, or lost the request: %+v", again)
	}
	if other, _ := m.Load(ctx, "team-b_web"); other.Operation != nil || len(other.History) != 0 {
		t.Fatalf("another key sees the state: %+v", other)
	}
	if err := m.Delete(ctx, "team-a_web"); err != nil {
		t.Fatal(err)
	}
	if gone, _ := m.Load(ctx, "team-a_web"); gone.Operation != nil {
		t.Fatalf("deleted state loads: %+v", gone)
	}
}
