package plugin

import (
	"fmt"
	"io/fs"
	"os"
	"path"
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
// apply) into w.app. Links are copied as the files or directories they
// resolve to inside the root.
func (w *workDir) copyFrom(root *render.Root, dir string) error {
	var walk func(rel string) error
	walk = func(rel string) error {
		entries, err := root.ReadDir(path.Join(dir, rel))
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := path.Join(rel, e.Name())
			src := path.Join(dir, name)
			dst := filepath.Join(w.app, filepath.FromSlash(name))
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				info, err := root.Stat(src)
				if err != nil {
					return err
				}
				isDir = info.IsDir()
			}
			if isDir {
				if err := os.Mkdir(dst, 0o700); err != nil {
					return err
				}
				if err := walk(name); err != nil {
					return err
				}
				continue
			}
			data, err := root.ReadFile(src)
			if err != nil {
				return err
			}
			if err := os.WriteFile(dst, data, 0o600); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(".")
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
