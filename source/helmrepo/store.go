package helmrepo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// diskStore keeps blobs (indexes, archives) under dir/blobs by the hex
// SHA-256 of their content, and small pins (a chart version's archive
// digest) under dir/pins by the hash of their key. Past maxBytes of blobs
// the least recently used are removed (pins are a few bytes and stay).
type diskStore struct {
	dir      string
	maxBytes int64

	mu    sync.Mutex
	sizes map[string]int64 // blob digest -> size
	used  map[string]time.Time
	total int64
}

func newDiskStore(dir string, maxBytes int64) (*diskStore, error) {
	s := &diskStore{dir: dir, maxBytes: maxBytes, sizes: map[string]int64{}, used: map[string]time.Time{}}
	for _, sub := range []string{"blobs", "pins"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("chart cache: %w", err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "blobs"))
	if err != nil {
		return nil, fmt.Errorf("chart cache: %w", err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !e.Type().IsRegular() || !isDigest(e.Name()) {
			continue
		}
		s.sizes[e.Name()] = info.Size()
		s.used[e.Name()] = info.ModTime()
		s.total += info.Size()
	}
	return s, nil
}

func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// digestOf returns the hex SHA-256 of data.
func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// put stores data and returns its digest.
func (s *diskStore) put(data []byte) (string, error) {
	d := digestOf(data)
	s.mu.Lock()
	_, have := s.sizes[d]
	s.mu.Unlock()
	if !have {
		tmp, err := os.CreateTemp(filepath.Join(s.dir, "blobs"), ".tmp-*")
		if err != nil {
			return "", fmt.Errorf("chart cache: %w", err)
		}
		_, werr := tmp.Write(data)
		cerr := tmp.Close()
		if werr != nil || cerr != nil {
			os.Remove(tmp.Name())
			return "", fmt.Errorf("chart cache: write: %w", errors.Join(werr, cerr))
		}
		if err := os.Rename(tmp.Name(), filepath.Join(s.dir, "blobs", d)); err != nil {
			os.Remove(tmp.Name())
			return "", fmt.Errorf("chart cache: %w", err)
		}
	}
	s.mu.Lock()
	if !have {
		if _, raced := s.sizes[d]; !raced {
			s.sizes[d] = int64(len(data))
			s.total += int64(len(data))
		}
	}
	s.used[d] = time.Now()
	s.mu.Unlock()
	s.evict(d)
	return d, nil
}

// get returns the blob of digest d and checks its content.
func (s *diskStore) get(d string) ([]byte, bool) {
	if !isDigest(d) {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(s.dir, "blobs", d))
	if err != nil || digestOf(data) != d {
		return nil, false
	}
	s.mu.Lock()
	s.used[d] = time.Now()
	s.mu.Unlock()
	return data, true
}

// evict removes least recently used blobs (never keep) until the total is
// within bounds.
func (s *diskStore) evict(keep string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total <= s.maxBytes {
		return
	}
	ds := make([]string, 0, len(s.sizes))
	for d := range s.sizes {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return s.used[ds[i]].Before(s.used[ds[j]]) })
	for _, d := range ds {
		if s.total <= s.maxBytes {
			return
		}
		if d == keep {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, "blobs", d)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		s.total -= s.sizes[d]
		delete(s.sizes, d)
		delete(s.used, d)
	}
}

// pin records that key's content is the blob d.
func (s *diskStore) pin(key, d string) error {
	p := filepath.Join(s.dir, "pins", digestOf([]byte(key)))
	tmp := p + ".tmp-" + d[:8]
	if err := os.WriteFile(tmp, []byte(d), 0o600); err != nil {
		return fmt.Errorf("chart cache: %w", err)
	}
	return os.Rename(tmp, p)
}

// pinned returns the digest pinned for key.
func (s *diskStore) pinned(key string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(s.dir, "pins", digestOf([]byte(key))))
	if err != nil {
		return "", false
	}
	d := strings.TrimSpace(string(data))
	return d, isDigest(d)
}

// bytes returns the bytes of blobs held.
func (s *diskStore) bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}
