package preview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/kubegitops/gitops/source"
)

// LocalGit is a Source over a Git repository on disk (a clone, its
// working tree ignored, or a bare repository), for previews in a CI job
// that has checked the repository out. Revisions are what `git
// rev-parse` takes (branches, remote branches such as origin/main, tags,
// commits); a branch name missing locally is also tried as origin/NAME.
// The Repository passed to its methods is ignored.
type LocalGit struct {
	dir  string
	mu   sync.Mutex // go-git's storage is read by one caller at a time
	repo *gogit.Repository
}

var _ source.Source = (*LocalGit)(nil)

// OpenLocalGit opens the repository at dir (or a parent of it).
func OpenLocalGit(dir string) (*LocalGit, error) {
	repo, err := gogit.PlainOpenWithOptions(dir, &gogit.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, fmt.Errorf("git repository %s: %w", dir, err)
	}
	return &LocalGit{dir: dir, repo: repo}, nil
}

// Resolve implements source.Source.
func (l *LocalGit) Resolve(_ context.Context, _ source.Repository, revision string) (source.Revision, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if revision == "" {
		revision = "HEAD"
	}
	h, err := l.repo.ResolveRevision(plumbing.Revision(revision))
	if err != nil && !strings.Contains(revision, "/") {
		h, err = l.repo.ResolveRevision(plumbing.Revision("origin/" + revision))
	}
	if err != nil {
		return source.Revision{}, fmt.Errorf("%s: revision %q: %w", l.dir, revision, source.ErrRevisionNotFound)
	}
	return source.Revision{Commit: h.String()}, nil
}

// Snapshot implements source.Source.
func (l *LocalGit) Snapshot(_ context.Context, _ source.Repository, rev source.Revision) (source.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, err := l.repo.CommitObject(plumbing.NewHash(rev.Commit))
	if err != nil {
		return nil, fmt.Errorf("%s: commit %s: %w", l.dir, rev.Commit, source.ErrRevisionNotFound)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("%s: commit %s: %w", l.dir, rev.Commit, err)
	}
	return &localTree{l: l, root: tree, rev: rev}, nil
}

// localTree is the tree of one commit as a source.Snapshot.
type localTree struct {
	l    *LocalGit
	root *object.Tree
	rev  source.Revision
}

var (
	_ fs.ReadFileFS = (*localTree)(nil)
	_ fs.ReadDirFS  = (*localTree)(nil)
	_ fs.StatFS     = (*localTree)(nil)
	_ fs.ReadLinkFS = (*localTree)(nil)
)

// Revision implements source.Snapshot.
func (t *localTree) Revision() source.Revision { return t.rev }

// entry finds name; the root is a directory entry with the root's hash.
func (t *localTree) entry(op, name string) (object.TreeEntry, error) {
	if !fs.ValidPath(name) {
		return object.TreeEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return object.TreeEntry{Name: ".", Mode: filemode.Dir, Hash: t.root.Hash}, nil
	}
	e, err := t.root.FindEntry(name)
	if err != nil {
		return object.TreeEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return *e, nil
}

// TreeHash implements source.Snapshot: the Git object id.
func (t *localTree) TreeHash(name string) (string, error) {
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	e, err := t.entry("treehash", name)
	if err != nil {
		return "", err
	}
	return e.Hash.String(), nil
}

func (t *localTree) info(e object.TreeEntry, size int64) fs.FileInfo {
	mode, _ := e.Mode.ToOSFileMode()
	if e.Mode == filemode.Submodule {
		mode = fs.ModeDir | 0o555
	}
	return &entryInfo{name: path.Base(e.Name), size: size, mode: mode}
}

// Lstat implements fs.ReadLinkFS.
func (t *localTree) Lstat(name string) (fs.FileInfo, error) {
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	e, err := t.entry("lstat", name)
	if err != nil {
		return nil, err
	}
	var size int64
	if e.Mode.IsFile() {
		if size, err = t.l.repo.Storer.EncodedObjectSize(e.Hash); err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
	}
	return t.info(e, size), nil
}

// Stat implements fs.StatFS, following links inside the tree.
func (t *localTree) Stat(name string) (fs.FileInfo, error) {
	target, err := t.follow("stat", name)
	if err != nil {
		return nil, err
	}
	return t.Lstat(target)
}

// follow resolves the links of name (at most 40) inside the tree.
func (t *localTree) follow(op, name string) (string, error) {
	for i := 0; i < 40; i++ {
		info, err := t.Lstat(name)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			return name, err
		}
		target, err := t.ReadLink(name)
		if err != nil {
			return "", err
		}
		next := path.Join(path.Dir(name), target)
		if path.IsAbs(target) || !fs.ValidPath(next) {
			return "", &fs.PathError{Op: op, Path: name, Err: source.ErrOutsideRepository}
		}
		name = next
	}
	return "", &fs.PathError{Op: op, Path: name, Err: errors.New("too many links")}
}

// ReadLink implements fs.ReadLinkFS.
func (t *localTree) ReadLink(name string) (string, error) {
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	e, err := t.entry("readlink", name)
	if err != nil {
		return "", err
	}
	if e.Mode != filemode.Symlink {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	data, err := t.blob(e.Hash)
	return string(data), err
}

func (t *localTree) blob(h plumbing.Hash) ([]byte, error) {
	b, err := t.l.repo.BlobObject(h)
	if err != nil {
		return nil, err
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// ReadFile implements fs.ReadFileFS.
func (t *localTree) ReadFile(name string) ([]byte, error) {
	target, err := t.follow("read", name)
	if err != nil {
		return nil, err
	}
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	e, err := t.entry("read", target)
	if err != nil {
		return nil, err
	}
	if !e.Mode.IsFile() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	data, err := t.blob(e.Hash)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

// ReadDir implements fs.ReadDirFS.
func (t *localTree) ReadDir(name string) ([]fs.DirEntry, error) {
	target, err := t.follow("readdir", name)
	if err != nil {
		return nil, err
	}
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	e, err := t.entry("readdir", target)
	if err != nil {
		return nil, err
	}
	if e.Mode == filemode.Submodule {
		return nil, nil
	}
	if e.Mode != filemode.Dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	tree, err := t.l.repo.TreeObject(e.Hash)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	out := make([]fs.DirEntry, 0, len(tree.Entries))
	for _, c := range tree.Entries {
		var size int64
		if c.Mode.IsFile() {
			size, _ = t.l.repo.Storer.EncodedObjectSize(c.Hash)
		}
		out = append(out, fs.FileInfoToDirEntry(t.info(c, size)))
	}
	return out, nil // Git keeps entries sorted by name
}

// Open implements fs.FS.
func (t *localTree) Open(name string) (fs.File, error) {
	info, err := t.Stat(name)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		entries, err := t.ReadDir(name)
		if err != nil {
			return nil, err
		}
		return &dirFile{info: info, entries: entries}, nil
	}
	data, err := t.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &blobFile{info: info, Reader: bytes.NewReader(data)}, nil
}

type entryInfo struct {
	name string
	size int64
	mode fs.FileMode
}

// Name implements fs.FileInfo: the entry's base name.
func (i *entryInfo) Name() string { return i.name }

// Size implements fs.FileInfo: the blob's length in bytes.
func (i *entryInfo) Size() int64 { return i.size }

// Mode implements fs.FileInfo: the mode Git records.
func (i *entryInfo) Mode() fs.FileMode { return i.mode }

// ModTime implements fs.FileInfo: Git keeps no times, so zero.
func (i *entryInfo) ModTime() time.Time { return time.Time{} }

// IsDir implements fs.FileInfo.
func (i *entryInfo) IsDir() bool { return i.mode.IsDir() }

// Sys implements fs.FileInfo: nil.
func (i *entryInfo) Sys() any { return nil }

type blobFile struct {
	info fs.FileInfo
	*bytes.Reader
}

// Stat implements fs.File.
func (f *blobFile) Stat() (fs.FileInfo, error) { return f.info, nil }

// Close implements fs.File: nothing to release.
func (f *blobFile) Close() error { return nil }

type dirFile struct {
	info    fs.FileInfo
	entries []fs.DirEntry
	off     int
}

// Stat implements fs.File for a directory.
func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }

// Read implements fs.File: a directory cannot be read as bytes.
func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: fs.ErrInvalid}
}

// Close implements fs.File: nothing to release.
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
