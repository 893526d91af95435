package render

import (
	"context"
	"errors"
	"io/fs"
	"path"
)

// WalkFunc visits one entry of Root.Walk. rel is the entry's path relative
// to the walked directory, slash-separated. info describes the entry with
// links followed inside the root; when following a link fails, info is nil
// and err says why (return nil to pass over the entry, or err to end the
// walk). Returning fs.SkipDir from a directory's visit leaves it unwalked;
// fs.SkipAll ends the walk without an error; any other error ends it with
// that error.
type WalkFunc func(rel string, info fs.FileInfo, err error) error

// WalkOptions change how Root.Walk goes through a tree.
type WalkOptions struct {
	// Once walks each directory at most once, however many links reach
	// it (a renderer that reads every manifest once). Without it only a
	// directory that is its own ancestor through links (a cycle) is not
	// entered again; two links to one directory are walked twice (a copy
	// of the tree).
	Once bool
}

// Walk visits the entries under dir (dir itself is not visited) in
// lexical order, depth first, through the root: budgets apply, links are
// followed inside the root and fail outside it, and link cycles end. It is
// the one tree walk of the renderers (plain, jsonnet, helm, plugin, and
// kustomize's file system).
func (r *Root) Walk(ctx context.Context, dir string, opts WalkOptions, fn WalkFunc) error {
	seen := map[string]bool{}
	var walk func(rel string, ancestors map[string]bool) error
	walk = func(rel string, ancestors map[string]bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		full := path.Join(dir, rel)
		real, err := r.Resolve(full)
		if err != nil {
			return err
		}
		if ancestors[real] || (opts.Once && seen[real]) {
			return nil
		}
		seen[real] = true
		ancestors[real] = true
		defer delete(ancestors, real)
		entries, err := r.ReadDir(full)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := path.Join(rel, e.Name())
			var info fs.FileInfo
			var err error
			if e.Type()&fs.ModeSymlink != 0 {
				info, err = r.Stat(path.Join(dir, name))
			} else {
				info, err = e.Info()
			}
			if err != nil {
				if err := fn(name, nil, err); err != nil {
					return err
				}
				continue
			}
			err = fn(name, info, nil)
			switch {
			case info.IsDir() && errors.Is(err, fs.SkipDir):
				continue
			case err != nil:
				return err
			case info.IsDir():
				if err := walk(name, ancestors); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := walk(".", map[string]bool{})
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}
