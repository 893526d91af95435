package state

import (
	"context"
	"encoding/json"
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

// The image override is opaque to the stores: the JSON a record held
// before it was (an *imageupdate.Override then) loads and is written back
// byte for byte, and the memory store shares none of it with a caller.
func TestImageOverrideIsKeptAsItWasWritten(t *testing.T) {
	const before = `{"history":[{"id":1,"revisions":["abc"],"deployedAt":"2026-01-02T03:04:05Z"}],` +
		`"imageOverride":{"KustomizeImages":["app=reg.example/team/app:1.0.1"],` +
		`"HelmParameters":[{"Name":"image.tag","Value":"1.10","ForceString":true}]}}`
	var st AppState
	if err := json.Unmarshal([]byte(before), &st); err != nil {
		t.Fatal(err)
	}
	if again, err := json.Marshal(st); err != nil || string(again) != before {
		t.Fatalf("a record written before is written back as\n%s (%v), want\n%s", again, err, before)
	}
	ctx := context.Background()
	m := NewMemoryStore()
	if err := m.Save(ctx, "web", st); err != nil {
		t.Fatal(err)
	}
	want := string(st.ImageOverride)
	got, _ := m.Load(ctx, "web")
	got.ImageOverride[2] = 'X'
	st.ImageOverride[3] = 'Y'
	if kept, _ := m.Load(ctx, "web"); string(kept.ImageOverride) != want {
		t.Fatalf("the store shares the override's bytes with a caller: %s", kept.ImageOverride)
	}
}
