package render

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// CopyTree copies the tree at dir of root into dst, an existing directory,
// for a renderer that runs a program on files on disk. Everything is read
// through root, so its budgets and link checks apply: a link is copied as
// the file or directory it resolves to inside the root, two links to one
// directory are two copies, a link cycle ends, and a link that leaves the
// root fails the copy. Directories are made 0700 and files 0600.
func CopyTree(ctx context.Context, root *Root, dir, dst string) error {
	return root.Walk(ctx, dir, WalkOptions{}, func(name string, info fs.FileInfo, err error) error {
		if err != nil {
			return err // a link that leaves the root, or a broken one
		}
		to := filepath.Join(dst, filepath.FromSlash(name))
		if info.IsDir() {
			if name == "." {
				return nil
			}
			return os.Mkdir(to, 0o700)
		}
		data, err := root.ReadFile(path.Join(dir, name))
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o600)
	})
}
