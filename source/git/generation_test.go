package git

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/source"
)

// TestStoreStartsNewGenerationWhenFull: after maxPacks incremental
// fetches the next fetch starts a new generation; the old one stays while
// a snapshot reads it and is deleted when that snapshot closes.
func TestStoreStartsNewGenerationWhenFull(t *testing.T) {
	srv := newGitServer(t, "", "")
	fastImportRepo(t, srv.root, "r", 4, 20)
	bare := filepath.Join(srv.root, "r.git")
	runGit(t, bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
	commits := strings.Fields(runGit(t, bare, "rev-list", "--reverse", "main"))
	s := newSource(t)
	s.maxPacks = 2
	repo := source.Repository{URL: srv.url("r")}
	ctx := context.Background()
	open := func(c string) *Snapshot {
		t.Helper()
		snap, err := s.OpenSnapshot(ctx, repo, source.Revision{Commit: c})
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	first := open(commits[0])
	first.Close()
	held := open(commits[1]) // gen-1 now holds 2 packs; keep reading it
	store, _ := s.store(mustEndpoint(t, repo))
	gen1 := store.current().dir
	if filepath.Base(gen1) != "gen-1" {
		t.Fatalf("first generation is %s", gen1)
	}

	third := open(commits[2]) // full: this fetch starts gen-2
	defer third.Close()
	if got := filepath.Base(store.current().dir); got != "gen-2" {
		t.Fatalf("after a full generation the store uses %s, want gen-2", got)
	}
	if _, err := os.Stat(gen1); err != nil {
		t.Fatalf("gen-1 removed while a snapshot reads it: %v", err)
	}
	if _, err := fs.ReadFile(held, "apps/app-000/cm-1.yaml"); err != nil {
		t.Fatalf("reading the held snapshot after the switch: %v", err)
	}
	held.Close()
	if _, err := os.Stat(gen1); !os.IsNotExist(err) {
		t.Fatalf("gen-1 still on disk after its last snapshot closed: %v", err)
	}
	// An old commit is fetched again into the new generation.
	again := open(commits[0])
	defer again.Close()
	if h, err := again.TreeHash("."); err != nil || h != runGit(t, bare, "rev-parse", commits[0]+"^{tree}") {
		t.Fatalf("tree of a refetched commit = %s, %v", h, err)
	}
	// A new Source on the cache directory continues with gen-2.
	s2 := newSource(t, func(o *Options) { o.CacheDir = s.opts.CacheDir })
	before := srv.uploadPacks.Load()
	if _, err := s2.Snapshot(ctx, repo, source.Revision{Commit: commits[2]}); err != nil {
		t.Fatal(err)
	}
	if srv.uploadPacks.Load() != before {
		t.Fatal("a new Source did not find the commit in the newest generation")
	}
}
