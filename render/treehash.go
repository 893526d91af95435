package render

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// TreeHasher is implemented by trees that know the content address of their
// subtrees, as source.Snapshot does (for Git, the object id of the tree or
// blob). Equal hashes must mean equal content, names, types and link
// targets.
type TreeHasher interface {
	TreeHash(path string) (string, error)
}

// TreeHash returns the content address of the file or directory at name in
// fsys: fsys's own TreeHash when it is a TreeHasher, else a SHA-256 computed
// here over the subtree (sorted names, entry types, file contents, symbolic
// link targets, links never followed). A missing path fails with an error
// wrapping fs.ErrNotExist.
func TreeHash(fsys fs.FS, name string) (string, error) {
	if th, ok := fsys.(TreeHasher); ok {
		return th.TreeHash(name)
	}
	h := sha256.New()
	if err := hashTree(fsys, name, h); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

type hashWriter interface{ Write([]byte) (int, error) }

func hashTree(fsys fs.FS, name string, h hashWriter) error {
	info, err := fs.Lstat(fsys, name)
	if err != nil {
		return err
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := fs.ReadLink(fsys, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "link %d:%s\n", len(target), target)
	case info.IsDir():
		entries, err := fs.ReadDir(fsys, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "tree %d\n", len(entries))
		for _, e := range entries {
			fmt.Fprintf(h, "entry %d:%s\n", len(e.Name()), e.Name())
			if err := hashTree(fsys, path.Join(name, e.Name()), h); err != nil {
				return err
			}
		}
	default:
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "blob %x\n", sum)
	}
	return nil
}

// dependencyDigest returns what of dep's path enters the cache key, read
// from fsys now: for content, the tree hash; for a listing, the names and
// types; for a stat, the type; for a link, its target. A path that does not
// exist digests as "absent", so its appearance is a change too.
func dependencyDigest(fsys fs.FS, dep dependency) (string, error) {
	h := sha256.New()
	absent := func(err error) bool { return errors.Is(err, fs.ErrNotExist) }
	if dep.Access&accessContent != 0 {
		th, err := TreeHash(fsys, dep.Path)
		if absent(err) {
			th = "absent"
		} else if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "content %s\n", th)
	}
	if dep.Access&accessList != 0 {
		entries, err := fs.ReadDir(fsys, dep.Path)
		if absent(err) {
			fmt.Fprintf(h, "list absent\n")
		} else if err != nil {
			return "", err
		} else {
			for _, e := range entries {
				fmt.Fprintf(h, "%d:%s %v\n", len(e.Name()), e.Name(), e.Type())
			}
		}
	}
	if dep.Access&(accessStat|accessLink) != 0 {
		info, err := fs.Lstat(fsys, dep.Path)
		if absent(err) {
			fmt.Fprintf(h, "stat absent\n")
		} else if err != nil {
			return "", err
		} else {
			fmt.Fprintf(h, "stat %v\n", info.Mode().Type())
			if info.Mode()&fs.ModeSymlink != 0 {
				target, err := fs.ReadLink(fsys, dep.Path)
				if err != nil {
					return "", err
				}
				fmt.Fprintf(h, "link %s\n", target)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
