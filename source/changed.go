package source

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
)

// ChangedPaths lists, sorted, the paths of the files (regular files and
// symbolic links) under dir that differ between two snapshots: added,
// removed, or changed in content, mode or kind. dir is "." for the whole
// tree; a dir missing from one side counts as empty.
//
// Rules: a subtree whose TreeHash is equal on both sides is skipped without
// being read, so the cost is proportional to what changed, not to the size
// of the tree. A path that is a directory on one side and a file on the
// other lists the file and every file under the directory. Directories
// themselves are never listed.
func ChangedPaths(older, newer Snapshot, dir string) ([]string, error) {
	if !fs.ValidPath(dir) {
		return nil, &fs.PathError{Op: "changed", Path: dir, Err: fs.ErrInvalid}
	}
	var out []string
	if err := diffDir(older, newer, dir, &out); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

func diffDir(a, b Snapshot, dir string, out *[]string) error {
	ha, errA := a.TreeHash(dir)
	hb, errB := b.TreeHash(dir)
	if err := notExistOK(errA); err != nil {
		return err
	}
	if err := notExistOK(errB); err != nil {
		return err
	}
	if errA == nil && errB == nil && ha == hb {
		return nil
	}
	ea, err := readDirOrEmpty(a, dir, errA)
	if err != nil {
		return err
	}
	eb, err := readDirOrEmpty(b, dir, errB)
	if err != nil {
		return err
	}
	byName := make(map[string]fs.DirEntry, len(ea))
	for _, e := range ea {
		byName[e.Name()] = e
	}
	for _, e := range eb {
		p := path.Join(dir, e.Name())
		old, ok := byName[e.Name()]
		delete(byName, e.Name())
		switch {
		case !ok:
			if err := listFiles(b, p, e, out); err != nil {
				return err
			}
		case old.IsDir() && e.IsDir():
			if err := diffDir(a, b, p, out); err != nil {
				return err
			}
		case old.IsDir() != e.IsDir():
			if err := listFiles(a, p, old, out); err != nil {
				return err
			}
			if err := listFiles(b, p, e, out); err != nil {
				return err
			}
		default:
			h1, err := a.TreeHash(p)
			if err != nil {
				return err
			}
			h2, err := b.TreeHash(p)
			if err != nil {
				return err
			}
			if h1 != h2 || old.Type() != e.Type() {
				*out = append(*out, p)
			}
		}
	}
	for name, e := range byName {
		if err := listFiles(a, path.Join(dir, name), e, out); err != nil {
			return err
		}
	}
	return nil
}

func notExistOK(err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func readDirOrEmpty(s Snapshot, dir string, hashErr error) ([]fs.DirEntry, error) {
	if hashErr != nil {
		return nil, nil
	}
	entries, err := fs.ReadDir(s, dir)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && dir != "." {
			// dir is a file on this side: the caller lists it itself.
			if info, serr := fs.Stat(s, dir); serr == nil && !info.IsDir() {
				return nil, nil
			}
		}
		return nil, fmt.Errorf("changed paths: %w", err)
	}
	return entries, nil
}

// listFiles appends p, or every file under p when it is a directory.
func listFiles(s Snapshot, p string, e fs.DirEntry, out *[]string) error {
	if !e.IsDir() {
		*out = append(*out, p)
		return nil
	}
	return fs.WalkDir(s, p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			*out = append(*out, q)
		}
		return nil
	})
}
