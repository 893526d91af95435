package render

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWalkEndsLinkCyclesAndVisitsOnce: a link to an ancestor is not walked
// again (the walk ends); with Once, a directory two links reach is walked
// once; without it, twice (a copy of the tree needs both).
func TestWalkEndsLinkCyclesAndVisitsOnce(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"app/sub", "shared"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"app/a.yaml", "app/sub/b.yaml", "shared/c.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"app/sub/loop": "..", "app/s1": "../shared", "app/s2": "../shared"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	root := NewRoot(os.DirFS(dir), DefaultLimits())
	walk := func(opts WalkOptions) []string {
		var files []string
		err := root.Walk(context.Background(), "app", opts, func(rel string, info fs.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if !info.IsDir() {
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	if got, want := walk(WalkOptions{Once: true}), []string{"a.yaml", "s1/c.yaml", "sub/b.yaml"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Once: %v, want %v", got, want)
	}
	if got, want := walk(WalkOptions{}), []string{"a.yaml", "s1/c.yaml", "s2/c.yaml", "sub/b.yaml"}; !reflect.DeepEqual(got, want) {
		t.Errorf("without Once: %v, want %v", got, want)
	}
	// A link that leaves the root is an error given to the visit.
	if err := os.Symlink("/etc", filepath.Join(dir, "app", "out")); err != nil {
		t.Fatal(err)
	}
	var linkErr error
	_ = root.Walk(context.Background(), "app", WalkOptions{}, func(rel string, info fs.FileInfo, err error) error {
		if rel == "out" {
			linkErr = err
		}
		return nil
	})
	if linkErr == nil {
		t.Error("a link out of the root reached the visit without an error")
	}
}
