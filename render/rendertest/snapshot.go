package rendertest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/render"
)

// Snapshot is an immutable in-memory tree with memoised tree hashes, as a
// Git snapshot (whose tree hashes are stored objects) behaves.
type Snapshot struct {
	fstest.MapFS
	mu     sync.Mutex
	hashes map[string]string
	// TreeHashCalls counts TreeHash calls, for tests that assert what the
	// cache looked at.
	TreeHashCalls int
}

// NewSnapshot returns a snapshot of files (path -> content). Symbolic links
// are written as files with mode fs.ModeSymlink and the target as content,
// as fstest.MapFS expects.
func NewSnapshot(files fstest.MapFS) *Snapshot {
	return &Snapshot{MapFS: files, hashes: map[string]string{}}
}

// TreeHash implements render.TreeHasher.
func (s *Snapshot) TreeHash(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.TreeHashCalls++
	if h, ok := s.hashes[name]; ok {
		return h, nil
	}
	h, err := render.TreeHash(s.MapFS, name)
	if err != nil {
		return "", err
	}
	s.hashes[name] = h
	return h, nil
}

// With returns a new snapshot: s's files with changes applied (a nil
// *fstest.MapFile deletes the path). s is unchanged.
func (s *Snapshot) With(changes map[string]*fstest.MapFile) *Snapshot {
	files := fstest.MapFS{}
	for k, v := range s.MapFS {
		files[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(files, k)
		} else {
			files[k] = v
		}
	}
	return NewSnapshot(files)
}

// LoadDir reads dir from disk into a MapFS under prefix (slash-separated,
// "" for the root). Symbolic links are kept as links.
func LoadDir(dir, prefix string) (fstest.MapFS, error) {
	files := fstest.MapFS{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.ToSlash(rel)
		if prefix != "" {
			name = strings.TrimSuffix(prefix, "/") + "/" + name
		}
		if name == "." || d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			files[name] = &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[name] = &fstest.MapFile{Data: data, Mode: 0o644}
		return nil
	})
	return files, err
}

// IdentityKey returns the cache key a Cached renderer computes for r and in,
// with a fresh memory store: what the property tests over options compare.
func IdentityKey(t testing.TB, r interface {
	render.Renderer
	render.Identifier
}, in render.Input) string {
	t.Helper()
	c := render.Cached(r, store.NewMemory(store.MemoryOptions{}), render.CacheOptions{})
	key, _, err := c.Key(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
