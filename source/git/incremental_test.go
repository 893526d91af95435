package git

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kubegitops/gitops/source"
)

// TestIncrementalFetchesReadBackExactly: commit after commit is fetched
// offering the earlier ones as haves, so the server sends thin packs whose
// deltas lean on objects of earlier packs; every file of every snapshot
// must still read back byte for byte as `git show` prints it.
func TestIncrementalFetchesReadBackExactly(t *testing.T) {
	srv := newGitServer(t, "", "")
	fastImportRepo(t, srv.root, "r", 12, 30)
	bare := filepath.Join(srv.root, "r.git")
	runGit(t, bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
	commits := strings.Fields(runGit(t, bare, "rev-list", "--reverse", "main"))
	s := newSource(t)
	repo := source.Repository{URL: srv.url("r")}
	for _, c := range commits {
		snap, err := s.OpenSnapshot(context.Background(), repo, source.Revision{Commit: c})
		if err != nil {
			t.Fatal(err)
		}
		files := 0
		err = fs.WalkDir(snap, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			got, err := snap.ReadFile(p)
			if err != nil {
				return err
			}
			if want := runGit(t, bare, "show", c+":"+p); strings.TrimSpace(string(got)) != want {
				t.Errorf("%s:%s differs from git show", c[:8], p)
			}
			files++
			return nil
		})
		snap.Close()
		if err != nil || files != 30 {
			t.Fatalf("commit %s: %d files, %v", c[:8], files, err)
		}
	}
	store, _ := s.store(mustEndpoint(t, repo))
	if store.current().packs != len(commits) {
		t.Fatalf("%d packs for %d incremental fetches", store.current().packs, len(commits))
	}
}

// TestIncrementalFetchSendsOnlyWhatChanged: after the first depth-1 fetch
// of a 300-file tree, each later commit (one file changed) adds a pack a
// fraction of the first's size, and the last snapshot's files hash to the
// blob ids `git ls-tree` lists.
func TestIncrementalFetchSendsOnlyWhatChanged(t *testing.T) {
	srv := newGitServer(t, "", "")
	fastImportRepo(t, srv.root, "r", 6, 300)
	bare := filepath.Join(srv.root, "r.git")
	runGit(t, bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
	commits := strings.Fields(runGit(t, bare, "rev-list", "--reverse", "main"))
	s := newSource(t)
	repo := source.Repository{URL: srv.url("r")}
	store, err := s.store(mustEndpoint(t, repo))
	if err != nil {
		t.Fatal(err)
	}
	packBytes := func() int64 {
		var n int64
		packs, _ := filepath.Glob(filepath.Join(store.current().dir, "objects", "pack", "*.pack"))
		for _, p := range packs {
			if info, err := os.Stat(p); err == nil {
				n += info.Size()
			}
		}
		return n
	}
	var first int64
	var last *Snapshot
	for i, c := range commits {
		snap, err := s.OpenSnapshot(context.Background(), repo, source.Revision{Commit: c})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = packBytes()
		}
		last = snap
	}
	perFetch := (packBytes() - first) / int64(len(commits)-1)
	if perFetch*5 > first {
		t.Fatalf("incremental fetches average %d bytes against %d for the first: not incremental", perFetch, first)
	}
	lsTree := runGit(t, bare, "ls-tree", "-r", commits[len(commits)-1])
	for _, line := range strings.Split(lsTree, "\n") {
		meta, p, _ := strings.Cut(line, "\t")
		want := strings.Fields(meta)[2]
		data, err := last.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := plumbing.ComputeHash(plumbing.BlobObject, data).String(); got != want {
			t.Fatalf("%s reads back as blob %s, git has %s", p, got, want)
		}
	}
}

// TestIncrementalFetchOverMemoryBudgetFallsBackToFullPack: a thin pack
// bigger than its memory budget is fetched again as a plain pack.
func TestIncrementalFetchOverMemoryBudgetFallsBackToFullPack(t *testing.T) {
	srv := newGitServer(t, "", "")
	fastImportRepo(t, srv.root, "r", 3, 50)
	bare := filepath.Join(srv.root, "r.git")
	runGit(t, bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
	commits := strings.Fields(runGit(t, bare, "rev-list", "--reverse", "main"))
	s := newSource(t)
	s.maxThinPackBytes = 64 // less than one changed file
	repo := source.Repository{URL: srv.url("r")}
	for _, c := range commits {
		snap, err := s.OpenSnapshot(context.Background(), repo, source.Revision{Commit: c})
		if err != nil {
			t.Fatal(err)
		}
		if h, err := snap.TreeHash("."); err != nil || h != runGit(t, bare, "rev-parse", c+"^{tree}") {
			t.Fatalf("tree of %s = %s, %v", c[:8], h, err)
		}
		if _, err := snap.ReadFile("apps/app-004/cm-49.yaml"); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.uploadPacks.Load(); n != int64(1+2*(len(commits)-1)) {
		t.Fatalf("%d upload-pack requests, want one per first fetch and two (thin, then plain) per later one", n)
	}
}
