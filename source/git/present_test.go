package git

import (
	"context"
	"testing"

	"github.com/kubegitops/gitops/source"
)

// TestPresentCommitIsRememberedPerGeneration: a commit found whole in a
// generation is remembered there, so the next snapshot of it reads no
// object; a commit not present is not remembered (a later fetch may bring
// it).
func TestPresentCommitIsRememberedPerGeneration(t *testing.T) {
	f := newFixture(t)
	s := newSource(t)
	snap, err := s.OpenSnapshot(context.Background(), f.repo, source.Revision{Commit: f.second, Ref: "refs/heads/main"})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	store, _ := s.store(mustEndpoint(t, f.repo))
	g := store.current()
	if !g.hasCommit(mustHash(f.second)) {
		t.Fatal("the fetched commit is not present")
	}
	g.readMu.Lock()
	_, remembered := g.present[mustHash(f.second)]
	g.readMu.Unlock()
	if !remembered {
		t.Fatal("the present commit was not remembered")
	}
	if g.hasCommit(mustHash(f.first)) { // depth 1: the parent was not fetched
		t.Fatal("the parent of a depth-1 fetch is present")
	}
	g.readMu.Lock()
	_, absent := g.present[mustHash(f.first)]
	g.readMu.Unlock()
	if absent {
		t.Fatal("an absent commit was remembered")
	}
}
