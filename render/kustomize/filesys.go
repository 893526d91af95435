package kustomize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubegitops/gitops/render"
)

// ErrReadOnly is returned by every write of a FileSystem.
var ErrReadOnly = errors.New("the render file system is read-only")

// FileSystem is kustomize's filesys.FileSystem over a render.Root. The
// tree appears at "/"; paths are cleaned and resolved inside the root, so
// "/../../etc" is "/etc" of the tree, never of the host. Overlays replace
// the content of some files (the kustomization rewritten with overrides)
// without writing anything.
type FileSystem struct {
	root     *render.Root
	overlays map[string][]byte // rooted path -> content

	// clones, when not empty, is the prefix of the directories kustomize
	// clones remote bases into (only when remote resources are allowed);
	// each clone is read through its own Root and may be removed.
	clones     string
	cloneRoots map[string]*render.Root

	// refused is the first SOPS-encrypted file read (kustomize rewords
	// read errors, so the renderer reports this one instead).
	refused error
}

var _ filesys.FileSystem = (*FileSystem)(nil)

// NewFileSystem returns a read-only kustomize file system over root.
func NewFileSystem(root *render.Root) *FileSystem {
	return &FileSystem{root: root, overlays: map[string][]byte{}}
}

// allowClones lets the file system read, and remove, the directories
// kustomize clones remote git bases into.
func (f *FileSystem) allowClones() {
	f.clones = filepath.Join(os.TempDir(), "kustomize-")
	f.cloneRoots = map[string]*render.Root{}
}

// route returns the Root that serves p, p relative to it, and the prefix
// that turns a relative path back into a kustomize path.
func (f *FileSystem) route(p string) (*render.Root, string, string) {
	if f.clones != "" && strings.HasPrefix(filepath.Clean(p), f.clones) {
		clean := filepath.Clean(p)
		top, rest, _ := strings.Cut(strings.TrimPrefix(clean, f.clones), string(filepath.Separator))
		dir := f.clones + top
		r, ok := f.cloneRoots[dir]
		if !ok {
			r = render.NewRoot(os.DirFS(dir), f.root.Limits())
			f.cloneRoots[dir] = r
		}
		if rest == "" {
			rest = "."
		}
		return r, filepath.ToSlash(rest), dir
	}
	return f.root, rel(p), ""
}

func join(prefix, r string) string {
	if prefix == "" {
		return abs(r)
	}
	if r == "." {
		return prefix
	}
	return prefix + "/" + r
}

// rel turns a kustomize path (absolute under "/" or relative to "/") into
// a path relative to the root.
func rel(p string) string {
	p = filepath.ToSlash(p)
	p = path.Clean("/" + p)
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

func abs(p string) string {
	if p == "." {
		return "/"
	}
	return "/" + p
}

// Create implements filesys.FileSystem; it always fails.
func (f *FileSystem) Create(p string) (filesys.File, error) {
	return nil, &render.PathError{Op: "create", Path: p, Err: ErrReadOnly}
}

// Mkdir implements filesys.FileSystem; it always fails.
func (f *FileSystem) Mkdir(p string) error {
	return &render.PathError{Op: "mkdir", Path: p, Err: ErrReadOnly}
}

// MkdirAll implements filesys.FileSystem; it always fails.
func (f *FileSystem) MkdirAll(p string) error {
	return &render.PathError{Op: "mkdir", Path: p, Err: ErrReadOnly}
}

// RemoveAll implements filesys.FileSystem: it removes a clone of a remote
// base and fails for anything else.
func (f *FileSystem) RemoveAll(p string) error {
	if _, r, prefix := f.route(p); prefix != "" && r == "." {
		delete(f.cloneRoots, prefix)
		return os.RemoveAll(prefix)
	}
	return &render.PathError{Op: "remove", Path: p, Err: ErrReadOnly}
}

// WriteFile implements filesys.FileSystem; it always fails.
func (f *FileSystem) WriteFile(p string, _ []byte) error {
	return &render.PathError{Op: "write", Path: p, Err: ErrReadOnly}
}

// Open implements filesys.FileSystem: the whole file is read (within the
// budgets) and served from memory.
func (f *FileSystem) Open(p string) (filesys.File, error) {
	data, err := f.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return &memFile{name: path.Base(rel(p)), data: data}, nil
}

// ReadFile implements filesys.FileSystem.
func (f *FileSystem) ReadFile(p string) ([]byte, error) {
	root, name, prefix := f.route(p)
	r, err := root.Resolve(name)
	if err != nil {
		return nil, err
	}
	if data, ok := f.overlays[r]; ok && prefix == "" {
		return data, nil
	}
	data, err := root.ReadFile(r)
	if err != nil {
		return nil, err
	}
	name = r // relative to the tree, as every render error names a file
	if prefix != "" {
		name = join(prefix, r)
	}
	if err := render.RefuseEncrypted(name, data); err != nil {
		if f.refused == nil {
			f.refused = err
		}
		return nil, err
	}
	return data, nil
}

// Refused returns the first SOPS-encrypted file read through f as an
// *render.EncryptedError, or nil.
func (f *FileSystem) Refused() error { return f.refused }

// IsDir implements filesys.FileSystem.
func (f *FileSystem) IsDir(p string) bool {
	root, name, _ := f.route(p)
	info, err := root.Stat(name)
	return err == nil && info.IsDir()
}

// Exists implements filesys.FileSystem.
func (f *FileSystem) Exists(p string) bool {
	root, name, prefix := f.route(p)
	if _, err := root.Stat(name); err == nil {
		return true
	}
	return f.generated(root, name, prefix)
}

// generated reports whether name is a file that exists only as an overlay
// (the output of an inflated helmCharts entry).
func (f *FileSystem) generated(root *render.Root, name, prefix string) bool {
	if prefix != "" {
		return false
	}
	r, err := root.Resolve(name)
	if err != nil {
		return false
	}
	_, ok := f.overlays[r]
	return ok
}

// ReadDir implements filesys.FileSystem: the names in the directory.
func (f *FileSystem) ReadDir(p string) ([]string, error) {
	root, name, _ := f.route(p)
	entries, err := root.ReadDir(name)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// CleanedAbs implements filesys.FileSystem: the directory (with symbolic
// links resolved inside the root) and, for a file, its name.
func (f *FileSystem) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	root, name, prefix := f.route(p)
	r, err := root.Resolve(name)
	if err != nil {
		return "", "", err
	}
	info, err := root.Stat(r)
	if err != nil && f.generated(root, r, prefix) {
		return filesys.ConfirmedDir(join(prefix, path.Dir(r))), path.Base(r), nil
	}
	if err != nil {
		return "", "", fmt.Errorf("'%s' does not exist: %w", p, err)
	}
	if info.IsDir() {
		return filesys.ConfirmedDir(join(prefix, r)), "", nil
	}
	return filesys.ConfirmedDir(join(prefix, path.Dir(r))), path.Base(r), nil
}

// Glob implements filesys.FileSystem for patterns whose meta-characters
// are in the last element (the only form kustomize documents).
func (f *FileSystem) Glob(pattern string) ([]string, error) {
	root, name, prefix := f.route(pattern)
	dir, base := path.Split(name)
	if dir == "" {
		dir = "."
	}
	entries, err := root.ReadDir(path.Clean(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if ok, err := path.Match(base, e.Name()); err != nil {
			return nil, err
		} else if ok {
			out = append(out, join(prefix, path.Join(path.Clean(dir), e.Name())))
		}
	}
	return out, nil
}

// Walk implements filesys.FileSystem, in lexical order, resolving links
// inside the root (render.Root.Walk: link cycles end).
func (f *FileSystem) Walk(p string, walkFn filepath.WalkFunc) error {
	root, start, prefix := f.route(p)
	info, err := root.Stat(start)
	if err != nil {
		return walkFn(join(prefix, start), nil, err)
	}
	if err := walkFn(join(prefix, start), info, nil); err != nil || !info.IsDir() {
		if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
			return nil
		}
		return err
	}
	// kustomize's interface carries no context; the root's budgets bound
	// the walk.
	return root.Walk(context.Background(), start, render.WalkOptions{}, func(r string, info fs.FileInfo, err error) error {
		return walkFn(join(prefix, path.Join(start, r)), info, err)
	})
}

// memFile is a read-only file served from memory.
type memFile struct {
	name string
	data []byte
	off  int
}

// Read implements io.Reader.
func (m *memFile) Read(b []byte) (int, error) {
	if m.off >= len(m.data) {
		return 0, io.EOF
	}
	n := copy(b, m.data[m.off:])
	m.off += n
	return n, nil
}

// Write implements io.Writer.
func (m *memFile) Write([]byte) (int, error) { return 0, ErrReadOnly }

// Close implements io.Closer.
func (m *memFile) Close() error { return nil }

// Stat implements fs.File.
func (m *memFile) Stat() (os.FileInfo, error) {
	return memInfo{name: m.name, size: int64(len(m.data))}, nil
}

type memInfo struct {
	name string
	size int64
}

// Name implements fs.FileInfo.
func (i memInfo) Name() string { return i.name }

// Size implements fs.FileInfo.
func (i memInfo) Size() int64 { return i.size }

// Mode implements fs.FileInfo.
func (i memInfo) Mode() fs.FileMode { return 0o444 }

// ModTime implements fs.FileInfo.
func (i memInfo) ModTime() time.Time { return time.Time{} }

// IsDir implements fs.FileInfo.
func (i memInfo) IsDir() bool { return false }

// Sys implements fs.FileInfo.
func (i memInfo) Sys() any { return nil }
