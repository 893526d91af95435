package treefs

import (
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Content is the content of a file kept outside the object store: a Git
// LFS object on disk, which replaces the pointer blob committed for it.
type Content struct {
	// Path is the file holding the content.
	Path string
	// Size is its size in bytes.
	Size int64
}

// SetContent makes every regular file whose blob is a key of m read as
// m's content (Open, ReadFile, Stat, ReadDir's Info). Symbolic links are
// never replaced. Call it before the FS is shared; m must not change
// afterwards.
func (s *FS) SetContent(m map[plumbing.Hash]Content) { s.content = m }

// fileData returns the content of the regular file whose blob is h.
func (s *FS) fileData(h plumbing.Hash) ([]byte, error) {
	if c, ok := s.content[h]; ok {
		data, err := os.ReadFile(c.Path)
		if err != nil {
			return nil, fmt.Errorf("content of blob %s: %w", h, err)
		}
		return data, nil
	}
	return s.blob(h)
}

// fileSize returns the size of the regular file whose blob is h.
func (s *FS) fileSize(h plumbing.Hash) (int64, error) {
	if c, ok := s.content[h]; ok {
		return c.Size, nil
	}
	return s.blobSize(h)
}

// WalkFiles calls fn for every regular (or executable) file of the tree,
// in tree order, with its path, its blob, the blob's size and a reader of
// the blob (links and submodules are skipped; SetContent is not applied).
// It stops at fn's first error, which it returns.
func (s *FS) WalkFiles(fn func(name string, h plumbing.Hash, size int64, read func() ([]byte, error)) error) error {
	return s.walk(".", s.root, fn)
}

func (s *FS) walk(dir string, tree plumbing.Hash, fn func(string, plumbing.Hash, int64, func() ([]byte, error)) error) error {
	t, err := s.tree(tree)
	if err != nil {
		return &fs.PathError{Op: "walk", Path: dir, Err: err}
	}
	for _, e := range t.entries {
		name := path.Join(dir, e.Name)
		switch e.Mode {
		case filemode.Dir:
			if err := s.walk(name, e.Hash, fn); err != nil {
				return err
			}
		case filemode.Regular, filemode.Deprecated, filemode.Executable:
			size, err := s.blobSize(e.Hash)
			if err != nil {
				return &fs.PathError{Op: "walk", Path: name, Err: err}
			}
			h := e.Hash
			if err := fn(name, h, size, func() ([]byte, error) { return s.blob(h) }); err != nil {
				return err
			}
		}
	}
	return nil
}
