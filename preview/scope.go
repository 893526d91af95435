package preview

import (
	"errors"
	"io/fs"
	"path"

	"github.com/kubegitops/gitops/source"
)

// changeSet is what changed between the base and head trees of the
// previewed repository: the changed files and, for them and every
// directory above them, whether they exist on each side.
type changeSet struct {
	paths []string
	// kind of an entry on each side: 0 absent, 'f' file, 'd' directory,
	// 'l' link.
	base, head map[string]byte
}

func newChangeSet(base, head source.Snapshot) (*changeSet, error) {
	paths, err := source.ChangedPaths(base, head, ".")
	if err != nil {
		return nil, err
	}
	c := &changeSet{paths: paths, base: map[string]byte{}, head: map[string]byte{}}
	for _, p := range paths {
		for q := p; q != "."; q = path.Dir(q) {
			if _, done := c.base[q]; done {
				break
			}
			if c.base[q], err = entryKind(base, q); err != nil {
				return nil, err
			}
			if c.head[q], err = entryKind(head, q); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

func entryKind(s source.Snapshot, p string) (byte, error) {
	info, err := fs.Lstat(s, p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrInvalid) {
			return 0, nil // a parent is a file on this side
		}
		return 0, err
	case info.Mode()&fs.ModeSymlink != 0:
		return 'l', nil
	case info.IsDir():
		return 'd', nil
	}
	return 'f', nil
}

// affects returns the first changed path the recorded reads depend on,
// or "" when the change cannot alter what the render read:
//   - a path read itself (content, stat, link target) changed, appeared
//     or disappeared;
//   - a changed path lies under a subtree whose content hash was taken;
//   - a listed directory gained, lost or retyped an entry.
func (c *changeSet) affects(reads map[string]readKind) string {
	for _, p := range c.paths {
		if k, ok := reads[p]; ok && k != 0 {
			return p
		}
		for q := p; ; q = path.Dir(q) {
			if reads[q]&readTree != 0 {
				return p
			}
			if q != p && reads[q]&readEntry != 0 && c.base[q] != c.head[q] {
				return p // a directory read by stat appeared or vanished
			}
			if q == "." {
				break
			}
			if reads[path.Dir(q)]&readList != 0 && c.base[q] != c.head[q] {
				return p // a listed directory gained or lost q
			}
		}
	}
	return ""
}
