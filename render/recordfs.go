package render

import (
	"io/fs"
	"sort"
	"sync"
)

// access is what a render did with a path; it decides what of the path
// enters the cache key.
type access uint8

const (
	accessStat    access = 1 << iota // existence and type (Stat, Lstat)
	accessLink                       // the target of a symbolic link
	accessList                       // the names and types in a directory
	accessContent                    // the bytes of a file
)

// dependency is one path a render touched and how.
type dependency struct {
	Path   string `json:"p"`
	Access access `json:"a"`
}

// recordingFS passes every call to the FS below and notes the path and the
// kind of access, so that the cache key can cover exactly what a render
// read. It implements the optional interfaces Root uses.
type recordingFS struct {
	fsys fs.FS
	mu   sync.Mutex
	seen map[string]access
}

func newRecordingFS(fsys fs.FS) *recordingFS {
	return &recordingFS{fsys: fsys, seen: map[string]access{}}
}

func (r *recordingFS) note(name string, a access) {
	r.mu.Lock()
	r.seen[name] |= a
	r.mu.Unlock()
}

// dependencies returns the recorded accesses sorted by path.
func (r *recordingFS) dependencies() []dependency {
	r.mu.Lock()
	defer r.mu.Unlock()
	deps := make([]dependency, 0, len(r.seen))
	for p, a := range r.seen {
		deps = append(deps, dependency{Path: p, Access: a})
	}
	sort.Slice(deps, func(i, j int) bool { return deps[i].Path < deps[j].Path })
	return deps
}

// Open implements fs.FS, recording the path it reads.
func (r *recordingFS) Open(name string) (fs.File, error) {
	f, err := r.fsys.Open(name)
	if err != nil {
		r.note(name, accessStat)
		return nil, err
	}
	if info, serr := f.Stat(); serr == nil && info.IsDir() {
		r.note(name, accessList)
	} else {
		r.note(name, accessContent)
	}
	return f, nil
}

// ReadFile implements fs.ReadFileFS, recording the path it reads.
func (r *recordingFS) ReadFile(name string) ([]byte, error) {
	r.note(name, accessContent)
	return fs.ReadFile(r.fsys, name)
}

// ReadDir implements fs.ReadDirFS, recording the path it reads.
func (r *recordingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	r.note(name, accessList)
	return fs.ReadDir(r.fsys, name)
}

// Stat implements fs.StatFS, recording the path it reads.
func (r *recordingFS) Stat(name string) (fs.FileInfo, error) {
	r.note(name, accessStat)
	return fs.Stat(r.fsys, name)
}

// Lstat implements Lstat of the wrapped tree, recording the path it reads.
func (r *recordingFS) Lstat(name string) (fs.FileInfo, error) {
	r.note(name, accessStat)
	return fs.Lstat(r.fsys, name)
}

// ReadLink implements ReadLink of the wrapped tree, recording the path it reads.
func (r *recordingFS) ReadLink(name string) (string, error) {
	r.note(name, accessLink)
	return fs.ReadLink(r.fsys, name)
}

// TreeHash passes through, so that a renderer below a recorder still sees a
// TreeHasher.
func (r *recordingFS) TreeHash(name string) (string, error) {
	return TreeHash(r.fsys, name)
}
