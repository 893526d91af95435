package dir

import (
	"context"
	"errors"
	"fmt"
	"github.com/kubegitops/gitops/internal/testfiles"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	testfiles.Write(t, root, files)
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestTreeHashesMatchGit(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"README.md":              "hi\n",
		"apps/a/deploy.yaml":     "kind: Deployment\n",
		"apps/a-b/x.yaml":        "kind: X\n", // sorts between "apps/a" and "apps/a/" in Git order
		"apps/a.yaml":            "kind: Y\n",
		"apps/b/nested/svc.yaml": "kind: Service\n",
	})
	if err := os.Chmod(filepath.Join(root, "README.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../README.md", filepath.Join(root, "apps", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, root, "init", "-q")
	gitIn(t, root, "add", "-A")
	gitTree := gitIn(t, root, "write-tree")

	s := New(DefaultOptions())
	repo := source.Repository{URL: root}
	rev, err := s.Resolve(context.Background(), repo, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rev.Commit, "sha256:") {
		t.Fatalf("revision %q is not a content hash", rev.Commit)
	}
	snap, err := s.Snapshot(context.Background(), repo, rev)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".", "apps", "apps/a", "apps/b/nested", "apps/link", "README.md"} {
		got, err := snap.TreeHash(p)
		if err != nil {
			t.Fatal(err)
		}
		spec := gitTree
		if p != "." {
			spec = gitTree + ":" + p
		}
		if want := gitIn(t, root, "rev-parse", spec); got != want {
			t.Errorf("TreeHash(%s) = %s, git says %s", p, got, want)
		}
	}
	if err := fstest.TestFS(snap, "README.md", "apps/a/deploy.yaml", "apps/b/nested/svc.yaml"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(snap, ".git"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(".git is part of the snapshot: %v", err)
	}
	// Same content, same revision; the file:// form names the same folder.
	again, err := s.Resolve(context.Background(), source.Repository{URL: "file://" + root}, "HEAD")
	if err != nil || again != rev {
		t.Fatalf("second resolve = %v, %v; want %v", again, err, rev)
	}
}

func TestChangedFolderGetsNewRevisionAndOldSnapshotIsRefused(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a/x.yaml": "1\n", "b/y.yaml": "1\n"})
	s := New(Options{})
	repo := source.Repository{URL: root}
	ctx := context.Background()
	rev1, err := s.Resolve(ctx, repo, "")
	if err != nil {
		t.Fatal(err)
	}
	snap1, err := s.Snapshot(ctx, repo, rev1)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"a/x.yaml": "2\n", "c/z.yaml": "1\n"})
	rev2, err := s.Resolve(ctx, repo, "")
	if err != nil || rev2 == rev1 {
		t.Fatalf("resolve after change = %v, %v; want a new revision", rev2, err)
	}
	snap2, err := s.Snapshot(ctx, repo, rev2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := source.ChangedPaths(snap1, snap2, ".")
	if err != nil || fmt.Sprint(got) != "[a/x.yaml c/z.yaml]" {
		t.Fatalf("ChangedPaths = %v, %v", got, err)
	}
	// The first snapshot still reads the old content.
	if data, _ := fs.ReadFile(snap1, "a/x.yaml"); string(data) != "1\n" {
		t.Fatalf("old snapshot changed: %q", data)
	}
	// A fresh Source cannot snapshot the old revision any more.
	if _, err := New(Options{}).Snapshot(ctx, repo, rev1); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Fatalf("snapshot of a stale revision: %v, want ErrRevisionNotFound", err)
	}
	if _, err := New(Options{}).Resolve(ctx, repo, rev1.Commit); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Fatalf("resolve of a stale revision: %v, want ErrRevisionNotFound", err)
	}
}

func TestHostileFolders(t *testing.T) {
	ctx := context.Background()
	t.Run("escaping link is kept but refused on read", func(t *testing.T) {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"a.yaml": "x\n"})
		if err := os.Symlink("/etc/passwd", filepath.Join(root, "values.yaml")); err != nil {
			t.Fatal(err)
		}
		s := New(Options{})
		rev, err := s.Resolve(ctx, source.Repository{URL: root}, "")
		if err != nil {
			t.Fatal(err)
		}
		snap, _ := s.Snapshot(ctx, source.Repository{URL: root}, rev)
		if _, err := fs.ReadFile(snap, "values.yaml"); !errors.Is(err, source.ErrOutsideRepository) {
			t.Fatalf("ReadFile(link to /etc/passwd) error = %v", err)
		}
	})
	t.Run("pipe is refused and named", func(t *testing.T) {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"apps/a.yaml": "x\n"})
		if err := syscall.Mkfifo(filepath.Join(root, "apps", "pipe"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := New(Options{}).Resolve(ctx, source.Repository{URL: root}, "")
		var pe *fs.PathError
		if !errors.As(err, &pe) || pe.Path != "apps/pipe" {
			t.Fatalf("error = %v, want a *fs.PathError naming apps/pipe", err)
		}
	})
	t.Run("size limit", func(t *testing.T) {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"big.yaml": strings.Repeat("x", 2048)})
		_, err := New(Options{MaxBytes: 1024}).Resolve(ctx, source.Repository{URL: root}, "")
		if !errors.Is(err, resource.ErrTooLarge) || !strings.Contains(err.Error(), "big.yaml") {
			t.Fatalf("error = %v, want ErrTooLarge naming big.yaml", err)
		}
	})
	t.Run("file limit", func(t *testing.T) {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"1": "", "2": "", "3": ""})
		_, err := New(Options{MaxFiles: 2}).Resolve(ctx, source.Repository{URL: root}, "")
		if !errors.Is(err, resource.ErrTooLarge) {
			t.Fatalf("error = %v, want ErrTooLarge", err)
		}
	})
	t.Run("missing folder", func(t *testing.T) {
		_, err := New(Options{}).Resolve(ctx, source.Repository{URL: filepath.Join(t.TempDir(), "nope")}, "")
		if !errors.Is(err, source.ErrRepositoryNotFound) {
			t.Fatalf("error = %v, want ErrRepositoryNotFound", err)
		}
	})
}
