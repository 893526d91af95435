package preview

import (
	"context"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/kubegitops/gitops/source"
)

// readKind is what a render did with a path of the previewed repository.
type readKind uint8

const (
	readEntry readKind = 1 << iota // stat, open or read of the path itself
	readList                       // a listing of the directory
	readTree                       // a content hash of the whole subtree
)

// readSet holds the paths of the previewed repository one app's render read,
// with how they were read: the evidence the preview uses to decide
// whether a change can affect the app.
type readSet struct {
	mu    sync.Mutex
	paths map[string]readKind
	// sources are the app's non-chart sources in order: the engine opens
	// their snapshots in that order, which tells the recorder which
	// snapshot plays which role.
	sources []sourceRole
	opened  int
}

type sourceRole struct {
	previewed  bool // the previewed repository
	valuesOnly bool // a ref source without path: only its files are read
}

func newReads(roles []sourceRole) *readSet {
	return &readSet{paths: map[string]readKind{}, sources: roles}
}

func (r *readSet) note(name string, k readKind) {
	r.mu.Lock()
	r.paths[path.Clean(name)] |= k
	r.mu.Unlock()
}

// Paths returns the recorded paths (for reports and tests).
func (r *readSet) Paths() map[string]readKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]readKind, len(r.paths))
	for p, k := range r.paths {
		out[p] = k
	}
	return out
}

// role returns the role of the next snapshot opened for this render.
func (r *readSet) role() (sourceRole, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.opened
	r.opened++
	if i < len(r.sources) {
		return r.sources[i], true
	}
	return sourceRole{}, false
}

type readsKey struct{}

// withReads returns ctx carrying the recorder of one app's render.
func withReads(ctx context.Context, r *readSet) context.Context {
	return context.WithValue(ctx, readsKey{}, r)
}

func readsFrom(ctx context.Context) *readSet {
	r, _ := ctx.Value(readsKey{}).(*readSet)
	return r
}

// recordingSource wraps the Source of every Git repository the engine
// reads: snapshots of the previewed repository opened under a recorder
// record every path read through them.
type recordingSource struct {
	source.Source
	previewed func(repoURL string) bool
}

// Snapshot implements source.Source.
func (s recordingSource) Snapshot(ctx context.Context, repo source.Repository, rev source.Revision) (source.Snapshot, error) {
	snap, err := s.Source.Snapshot(ctx, repo, rev)
	r := readsFrom(ctx)
	if err != nil || r == nil {
		return snap, err
	}
	role, known := r.role()
	if known && !role.previewed || !known && !s.previewed(repo.URL) {
		return snap, nil
	}
	// The engine hashes the root of a values-only ref source only because
	// a mount's root hash covers its mounts; what the render took from it
	// is the files it read, recorded one by one.
	return &recordingSnapshot{snap: snap, r: r, ignoreRootHash: known && role.valuesOnly}, nil
}

// recordingSnapshot passes every call through and records the path.
type recordingSnapshot struct {
	snap           source.Snapshot
	r              *readSet
	ignoreRootHash bool
}

var (
	_ fs.ReadFileFS = (*recordingSnapshot)(nil)
	_ fs.ReadDirFS  = (*recordingSnapshot)(nil)
	_ fs.StatFS     = (*recordingSnapshot)(nil)
	_ fs.ReadLinkFS = (*recordingSnapshot)(nil)
)

// Open implements fs.FS; opening a directory counts as listing it.
func (s *recordingSnapshot) Open(name string) (fs.File, error) {
	f, err := s.snap.Open(name)
	if err == nil {
		if info, serr := f.Stat(); serr == nil && info.IsDir() {
			s.r.note(name, readEntry|readList)
			return f, nil
		}
	}
	s.r.note(name, readEntry)
	return f, err
}

// ReadFile implements fs.ReadFileFS.
func (s *recordingSnapshot) ReadFile(name string) ([]byte, error) {
	s.r.note(name, readEntry)
	return fs.ReadFile(s.snap, name)
}

// ReadDir implements fs.ReadDirFS.
func (s *recordingSnapshot) ReadDir(name string) ([]fs.DirEntry, error) {
	s.r.note(name, readEntry|readList)
	return fs.ReadDir(s.snap, name)
}

// Stat implements fs.StatFS.
func (s *recordingSnapshot) Stat(name string) (fs.FileInfo, error) {
	s.r.note(name, readEntry)
	return fs.Stat(s.snap, name)
}

// Lstat implements fs.ReadLinkFS.
func (s *recordingSnapshot) Lstat(name string) (fs.FileInfo, error) {
	s.r.note(name, readEntry)
	return fs.Lstat(s.snap, name)
}

// ReadLink implements fs.ReadLinkFS.
func (s *recordingSnapshot) ReadLink(name string) (string, error) {
	s.r.note(name, readEntry)
	return fs.ReadLink(s.snap, name)
}

// Revision implements source.Snapshot.
func (s *recordingSnapshot) Revision() source.Revision { return s.snap.Revision() }

// TreeHash implements source.Snapshot: the whole subtree counts as read.
func (s *recordingSnapshot) TreeHash(name string) (string, error) {
	if !(s.ignoreRootHash && path.Clean(name) == ".") {
		s.r.note(name, readTree)
	}
	return s.snap.TreeHash(name)
}

// Close implements source.Closer.
func (s *recordingSnapshot) Close() error {
	if c, ok := s.snap.(source.Closer); ok {
		return c.Close()
	}
	return nil
}

// sameRepo reports whether two repository URLs name the same repository
// (case of the host, a trailing slash and ".git" aside). A folder on disk
// is the same whether named by its absolute path or a file:// URL.
func sameRepo(a, b string) bool {
	norm := func(u string) string {
		u = strings.TrimSpace(u)
		if p, ok := strings.CutPrefix(u, "file://"); ok && path.IsAbs(p) {
			u = p
		}
		if path.IsAbs(u) {
			u = path.Clean(u)
		}
		u = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git"), "/")
		return strings.ToLower(u)
	}
	return norm(a) == norm(b)
}
