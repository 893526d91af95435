package git

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/source"
)

// A repository on disk (the fixture's working clone) read by Local:
// revisions as git rev-parse names them, snapshots with Git's tree hashes,
// nothing fetched.
func TestLocalReadsARepositoryOnDisk(t *testing.T) {
	f := newFixture(t)
	l, err := OpenLocal(f.work.dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before := f.srv.uploadPacks.Load()
	for rev, want := range map[string]string{"": f.second, "HEAD": f.second, "main": f.second, "feature": f.feature, "v1.0.0": f.first, f.first: f.first} {
		got, err := l.Resolve(ctx, source.Repository{}, rev)
		if err != nil || got.Commit != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", rev, got, err, want)
		}
	}
	if _, err := l.Resolve(ctx, source.Repository{}, "no-such"); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("unknown revision: %v", err)
	}
	rev := source.Revision{Commit: f.second}
	snap, err := l.Snapshot(ctx, source.Repository{}, rev)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Revision() != rev {
		t.Errorf("Revision() = %v", snap.Revision())
	}
	if err := fstest.TestFS(snap, "README.md", "apps/a/deploy.yaml", "apps/b/nested/service.yaml", "apps/c/new.yaml"); err != nil {
		t.Fatal(err)
	}
	if data, err := fs.ReadFile(snap, "apps/a/deploy.yaml"); err != nil || string(data) != "kind: Deployment\nreplicas: 2\n" {
		t.Fatalf("ReadFile = %q, %v", data, err)
	}
	for _, p := range []string{"apps", "apps/b/nested", "apps/a/deploy.yaml"} {
		got, err := snap.TreeHash(p)
		if want := runGit(t, f.work.dir, "rev-parse", f.second+":"+p); err != nil || got != want {
			t.Errorf("TreeHash(%q) = %s, %v; git rev-parse says %s", p, got, err, want)
		}
	}
	if _, err := l.Snapshot(ctx, source.Repository{}, source.Revision{Commit: "0123456789012345678901234567890123456789"}); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Errorf("unknown commit: %v", err)
	}
	if n := f.srv.uploadPacks.Load() - before; n != 0 {
		t.Errorf("a local repository fetched %d times", n)
	}
}
