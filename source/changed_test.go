package source_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/dir"
)

// snapshotOf writes files (and links, as "->target") into a fresh folder
// and snapshots it with source/dir.
func snapshotOf(t *testing.T, files map[string]string) source.Snapshot {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if len(content) > 2 && content[:2] == "->" {
			if err := os.Symlink(content[2:], full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := dir.New(dir.Options{})
	repo := source.Repository{URL: root}
	rev, err := s.Resolve(context.Background(), repo, "")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(context.Background(), repo, rev)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestChangedPathsRules(t *testing.T) {
	older := snapshotOf(t, map[string]string{
		"same/a.yaml":    "1",
		"edit/a.yaml":    "1",
		"gone/x/y.yaml":  "1",
		"kind/was-file":  "1",
		"kind/was-dir/z": "1",
		"link":           "->same/a.yaml",
	})
	newer := snapshotOf(t, map[string]string{
		"same/a.yaml":        "1",
		"edit/a.yaml":        "2",
		"new/b.yaml":         "1",
		"kind/was-file/q":    "1",
		"kind/was-dir":       "1",
		"link":               "->edit/a.yaml",
		"deep/er/est/c.yaml": "1",
	})
	got, err := source.ChangedPaths(older, newer, ".")
	if err != nil {
		t.Fatal(err)
	}
	want := "[deep/er/est/c.yaml edit/a.yaml gone/x/y.yaml kind/was-dir kind/was-dir/z kind/was-file kind/was-file/q link new/b.yaml]"
	if fmt.Sprint(got) != want {
		t.Fatalf("ChangedPaths =\n %v\nwant\n %s", got, want)
	}
	if got, err := source.ChangedPaths(older, newer, "same"); err != nil || len(got) != 0 {
		t.Fatalf("unchanged subtree: %v, %v", got, err)
	}
	if got, err := source.ChangedPaths(older, newer, "gone"); err != nil || fmt.Sprint(got) != "[gone/x/y.yaml]" {
		t.Fatalf("subtree removed on one side: %v, %v", got, err)
	}
	if _, err := source.ChangedPaths(older, newer, "../x"); err == nil {
		t.Fatal("invalid dir accepted")
	}
}
