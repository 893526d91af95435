package git

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/kubegitops/gitops/source"
)

// TestSymlinks covers the hostile links of user-asks S3: to "/", "/etc",
// "..", a chain leaving the root and re-entering, an absolute link into the
// repository, a loop, and a symlinked values.yaml.
func TestSymlinks(t *testing.T) {
	srv := newGitServer(t, "", "")
	w := newWorkRepo(t, srv.root, "links")
	w.write(map[string]string{"apps/a/deploy.yaml": "kind: Deployment\n", "charts/values.yaml": "replicas: 1\n"})
	w.symlink("../apps/a/deploy.yaml", "links/ok")
	w.symlink("../apps", "links/dir")
	w.symlink("..", "links/up")
	w.symlink("/", "links/root")
	w.symlink("/etc", "links/etc")
	w.symlink("../..", "links/out")
	w.symlink("hop", "links/chain")
	w.symlink("../../"+filepath.Base(w.dir)+"/apps", "links/hop")
	w.symlink(filepath.Join(w.dir, "apps"), "links/abs")
	w.symlink("loop2", "links/loop1")
	w.symlink("loop1", "links/loop2")
	w.symlink("../../../../etc/passwd", "apps/b/values.yaml")
	w.symlink("../../charts/values.yaml", "apps/c/values.yaml")
	commit := w.commit("links")
	w.publish()

	s := newSource(t)
	snap, err := s.OpenSnapshot(context.Background(), source.Repository{URL: srv.url("links")}, source.Revision{Commit: commit})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()

	// Links inside the tree are followed.
	if data, err := fs.ReadFile(snap, "links/ok"); err != nil || string(data) != "kind: Deployment\n" {
		t.Errorf("ReadFile(links/ok) = %q, %v", data, err)
	}
	if data, err := fs.ReadFile(snap, "links/dir/a/deploy.yaml"); err != nil || string(data) != "kind: Deployment\n" {
		t.Errorf("ReadFile through a directory link = %q, %v", data, err)
	}
	if data, err := fs.ReadFile(snap, "apps/c/values.yaml"); err != nil || string(data) != "replicas: 1\n" {
		t.Errorf("ReadFile(in-repo values link) = %q, %v", data, err)
	}
	if entries, err := fs.ReadDir(snap, "links/up/apps"); err != nil || len(entries) != 3 {
		t.Errorf("ReadDir(links/up/apps) = %v, %v; want a, b, c", entries, err)
	}

	// Links that leave the tree are a typed error from every following call.
	for _, p := range []string{"links/root", "links/etc", "links/out", "links/chain", "links/hop", "links/abs", "apps/b/values.yaml", "links/root/etc/passwd"} {
		_, err := fs.ReadFile(snap, p)
		var pe *fs.PathError
		if !errors.Is(err, source.ErrOutsideRepository) || !errors.As(err, &pe) || pe.Path != p {
			t.Errorf("ReadFile(%s) error = %v, want *fs.PathError for %s wrapping ErrOutsideRepository", p, err, p)
		}
		if _, err := fs.Stat(snap, p); !errors.Is(err, source.ErrOutsideRepository) {
			t.Errorf("Stat(%s) error = %v, want ErrOutsideRepository", p, err)
		}
	}
	if _, err := fs.ReadFile(snap, "links/loop1"); err == nil {
		t.Error("ReadFile(link loop) succeeded")
	}

	// Links are exposed as links.
	info, err := fs.Lstat(snap, "links/root")
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(links/root) = %v, %v; want a symlink", info, err)
	}
	if target, err := fs.ReadLink(snap, "links/etc"); err != nil || target != "/etc" {
		t.Errorf("ReadLink(links/etc) = %q, %v", target, err)
	}
	if _, err := fs.ReadLink(snap, "apps/a/deploy.yaml"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadLink(regular file) error = %v, want fs.ErrInvalid", err)
	}
	entries, err := fs.ReadDir(snap, "links")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type() != fs.ModeSymlink {
			t.Errorf("ReadDir(links): %s has type %v, want symlink", e.Name(), e.Type())
		}
	}
	// Walking the tree does not follow links, so escaping ones do no harm.
	var files int
	if err := fs.WalkDir(snap, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files++
		}
		return nil
	}); err != nil || files != 15 {
		t.Errorf("WalkDir: %d files, %v; want 15 (4 files, 11 links)", files, err)
	}
	// A link's tree hash is its blob: git rev-parse agrees.
	if got, want := mustTreeHash(t, snap, "links/root"), runGit(t, w.dir, "rev-parse", commit+":links/root"); got != want {
		t.Errorf("TreeHash(links/root) = %s, want %s", got, want)
	}
}
