package engine

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/state"
)

// TestMethodsNameAppsByKey: two apps named web in two namespaces, and one
// in the control namespace, are told apart by every method that names an
// app; a key without a namespace is the control namespace's app; the
// state store keeps each under the engine's instance name (the tracking
// id), as before keys were typed, so records written earlier are read.
func TestMethodsNameAppsByKey(t *testing.T) {
	ctx := context.Background()
	store := state.NewMemoryStore()
	e, _ := offlineLiveEngine(t, func(o *Options) { o.State = store })
	a, b, c := offlineApp("team-a", "web", "a"), offlineApp("team-b", "web", "b"), offlineApp("argocd", "web", "c")
	for _, app := range []Application{b, c, a} {
		if err := e.Apps().Upsert(app); err != nil {
			t.Fatal(err)
		}
	}
	ka, kb, kc := v1alpha1.KeyOf(&a), v1alpha1.KeyOf(&b), v1alpha1.KeyOf(&c)
	bare := v1alpha1.AppKey{Name: "web"}
	if got := e.Apps().ManagedApps(); !slices.Equal(got, []v1alpha1.AppKey{kc, ka, kb}) {
		t.Fatalf("ManagedApps = %v, want %v sorted by namespace", got, []v1alpha1.AppKey{kc, ka, kb})
	}

	history := func(n int) func(*state.AppState) (bool, error) {
		return func(st *state.AppState) (bool, error) {
			st.History = make([]appstatus.HistoryEntry, n)
			return true, nil
		}
	}
	for key, n := range map[v1alpha1.AppKey]int{ka: 1, kb: 2, bare: 3} {
		if err := e.Apps().UpdateAppState(ctx, key, history(n)); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[v1alpha1.AppKey]int{ka: 1, kb: 2, kc: 3, bare: 3} {
		if h, err := e.History(ctx, key); err != nil || len(h) != want {
			t.Errorf("History(%v) has %d entries (%v), want %d", key, len(h), err, want)
		}
	}
	for name, want := range map[string]int{"team-a_web": 1, "team-b_web": 2, "web": 3} {
		if st, _ := store.Load(ctx, name); len(st.History) != want {
			t.Errorf("the store keeps %d entries under %q, want %d", len(st.History), name, want)
		}
	}

	if err := e.Apps().UpdateAppState(ctx, kb, func(st *state.AppState) (bool, error) {
		st.Operation = &state.OperationState{Message: "b's"}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if op, _ := e.LastOperation(ctx, kb); op == nil || op.Message != "b's" {
		t.Errorf("LastOperation(%v) = %+v, want b's", kb, op)
	}
	if op, _ := e.LastOperation(ctx, ka); op != nil {
		t.Errorf("LastOperation(%v) = %+v: another namespace's operation", ka, op)
	}
	if err := e.Terminate(ka); !errors.Is(err, ErrNoOperation) {
		t.Errorf("Terminate(%v) = %v, want ErrNoOperation", ka, err)
	}

	if err := e.Apps().Remove(ka); err != nil {
		t.Fatal(err)
	}
	if got := e.Apps().ManagedApps(); !slices.Equal(got, []v1alpha1.AppKey{kc, kb}) {
		t.Fatalf("after Remove(%v): ManagedApps = %v", ka, got)
	}
	if _, ok := e.Apps().ManagedApp(kb); !ok {
		t.Fatalf("Remove(%v) took %v too", ka, kb)
	}
}
