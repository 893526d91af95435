package treefs

import (
	"bytes"
	"io"
	"io/fs"
	"path"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Open implements fs.FS, following links inside the tree.
func (s *FS) Open(name string) (fs.File, error) {
	n, err := s.resolve("open", name, true)
	if err != nil {
		return nil, err
	}
	if n.isDir() {
		entries, err := s.readDir("open", name, n)
		if err != nil {
			return nil, err
		}
		return &dirFile{info: s.info(n, path.Base(name), 0), entries: entries}, nil
	}
	data, err := s.fileData(n.hash)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &blobFile{info: s.info(n, path.Base(name), int64(len(data))), r: bytes.NewReader(data)}, nil
}

// ReadFile implements fs.ReadFileFS.
func (s *FS) ReadFile(name string) ([]byte, error) {
	n, err := s.resolve("readfile", name, true)
	if err != nil {
		return nil, err
	}
	if n.isDir() {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errIsDir}
	}
	data, err := s.fileData(n.hash)
	if err != nil {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: err}
	}
	return data, nil
}

// ReadDir implements fs.ReadDirFS: entries sorted by name, links reported
// as links (fs.ModeSymlink), not followed.
func (s *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := s.resolve("readdir", name, true)
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
	}
	return s.readDir("readdir", name, n)
}

// Stat implements fs.StatFS, following links.
func (s *FS) Stat(name string) (fs.FileInfo, error) {
	n, err := s.resolve("stat", name, true)
	if err != nil {
		return nil, err
	}
	return s.statNode(name, n)
}

// Lstat implements fs.ReadLinkFS: a link at name is described, not
// followed.
func (s *FS) Lstat(name string) (fs.FileInfo, error) {
	n, err := s.resolve("lstat", name, false)
	if err != nil {
		return nil, err
	}
	return s.statNode(name, n)
}

// ReadLink implements fs.ReadLinkFS: the target of the link at name, as
// written in the commit.
func (s *FS) ReadLink(name string) (string, error) {
	n, err := s.resolve("readlink", name, false)
	if err != nil {
		return "", err
	}
	if n.mode != filemode.Symlink {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	target, err := s.blob(n.hash)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return string(target), nil
}

func (s *FS) statNode(name string, n node) (fs.FileInfo, error) {
	var size int64
	switch {
	case n.mode == filemode.Symlink:
		sz, err := s.blobSize(n.hash)
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
		}
		size = sz
	case !n.isDir():
		sz, err := s.fileSize(n.hash)
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
		}
		size = sz
	}
	return s.info(n, path.Base(name), size), nil
}

func (s *FS) readDir(op, name string, n node) ([]fs.DirEntry, error) {
	if n.mode == filemode.Submodule {
		return nil, nil
	}
	t, err := s.tree(n.hash)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	out := make([]fs.DirEntry, 0, len(t.entries))
	for _, e := range t.entries {
		out = append(out, &dirEntry{snap: s, n: node{name: e.Name, mode: e.Mode, hash: e.Hash}})
	}
	// Git orders trees as if directory names ended in '/'; fs wants plain
	// name order.
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (s *FS) info(n node, base string, size int64) *fileInfo {
	return &fileInfo{name: base, size: size, mode: fsMode(n.mode)}
}

// fsMode maps Git modes to fs modes. Everything is read-only.
func fsMode(m filemode.FileMode) fs.FileMode {
	switch m {
	case filemode.Dir, filemode.Submodule:
		return fs.ModeDir | 0o555
	case filemode.Symlink:
		return fs.ModeSymlink | 0o444
	case filemode.Executable:
		return 0o555
	}
	return 0o444
}

var (
	errIsDir  = &modeError{"is a directory"}
	errNotDir = &modeError{"not a directory"}
)

type modeError struct{ msg string }

// Error implements error.
func (e *modeError) Error() string { return e.msg }

type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

// Name implements fs.FileInfo.
func (i *fileInfo) Name() string { return i.name }

// Size implements fs.FileInfo.
func (i *fileInfo) Size() int64 { return i.size }

// Mode implements fs.FileInfo.
func (i *fileInfo) Mode() fs.FileMode { return i.mode }

// ModTime implements fs.FileInfo.
func (i *fileInfo) ModTime() time.Time { return time.Time{} }

// IsDir implements fs.FileInfo.
func (i *fileInfo) IsDir() bool { return i.mode.IsDir() }

// Sys implements fs.FileInfo.
func (i *fileInfo) Sys() any { return nil }

type dirEntry struct {
	snap *FS
	n    node
}

// Name implements fs.DirEntry.
func (d *dirEntry) Name() string { return d.n.name }

// IsDir implements fs.DirEntry.
func (d *dirEntry) IsDir() bool { return d.n.isDir() }

// Type implements fs.DirEntry.
func (d *dirEntry) Type() fs.FileMode { return fsMode(d.n.mode).Type() }

// Info implements fs.DirEntry.
func (d *dirEntry) Info() (fs.FileInfo, error) {
	return d.snap.statNode(d.n.name, d.n)
}

// blobFile is an opened file; its content is in memory, so reads take no
// lock.
type blobFile struct {
	info *fileInfo
	r    *bytes.Reader
}

// Stat implements fs.File.
func (f *blobFile) Stat() (fs.FileInfo, error) { return f.info, nil }

// Read implements io.Reader.
func (f *blobFile) Read(p []byte) (int, error) { return f.r.Read(p) }

// Close implements io.Closer.
func (f *blobFile) Close() error { return nil }

// Seek and ReadAt let callers (http.FileServer, zip readers) use the file.
func (f *blobFile) Seek(off int64, whence int) (int64, error) { return f.r.Seek(off, whence) }

// ReadAt implements io.ReaderAt.
func (f *blobFile) ReadAt(p []byte, off int64) (int, error) { return f.r.ReadAt(p, off) }

type dirFile struct {
	info    *fileInfo
	entries []fs.DirEntry
	off     int
}

// Stat implements fs.File.
func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }

// Read implements io.Reader.
func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errIsDir}
}

// Close implements io.Closer.
func (d *dirFile) Close() error { return nil }

// ReadDir implements fs.ReadDirFile.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	if n > len(rest) {
		n = len(rest)
	}
	d.off += n
	return rest[:n], nil
}
