package plugin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kubegitops/gitops/render"
)

// workDir is the private copy a plugin runs in: top (0700, random name)
// holds app (the copy) and home (HOME and TMPDIR).
type workDir struct {
	top, app, home string
}

func newWorkDir(parent string) (*workDir, error) {
	top, err := os.MkdirTemp(parent, "gitops-plugin-*")
	if err != nil {
		return nil, fmt.Errorf("plugin work directory: %w", err)
	}
	if err := os.Chmod(top, 0o700); err != nil {
		_ = os.RemoveAll(top)
		return nil, err
	}
	w := &workDir{top: top, app: filepath.Join(top, "app"), home: filepath.Join(top, "home")}
	for _, d := range []string{w.app, w.home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			w.remove()
			return nil, err
		}
	}
	return w, nil
}

// copyFrom copies the tree at dir (through root: budgets and link checks
// apply) into w.app, as render.CopyTree does.
func (w *workDir) copyFrom(ctx context.Context, root *render.Root, dir string) error {
	return render.CopyTree(ctx, root, dir, w.app)
}

// remove deletes the work directory, first giving the owner back every
// permission a plugin may have taken away (a 0000 file, a directory
// without x), so that cleanup always succeeds.
func (w *workDir) remove() {
	_ = filepath.WalkDir(w.top, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() || err != nil {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	// A directory unreadable during the walk above is readable now; a
	// second pass fixes what it contained.
	_ = filepath.WalkDir(w.top, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(w.top)
}
