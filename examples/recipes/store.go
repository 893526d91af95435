package recipes

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kubegitops/gitops/cache/store"
)

// DiskStore is a store.Store in a local folder, one file per key, so that
// rendered manifests survive a restart (and are shared by processes on one
// volume). Each file holds its expiry time, then the value. Expired files
// are misses; deleting them is left to a cleaner (or to the next Set).
type DiskStore struct {
	// Dir is the folder; it must exist.
	Dir string
	// TTL is used when Set is given none. Default 24 h.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

var _ store.Store = (*DiskStore)(nil)

// Get implements store.Store.
func (d *DiskStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	data, err := os.ReadFile(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil || len(data) < 8 {
		return nil, false, err // a short file is a miss; the next Set replaces it
	}
	if d.now().UnixNano() >= int64(binary.BigEndian.Uint64(data)) {
		return nil, false, nil
	}
	return data[8:], true, nil
}

// Set implements store.Store: write a temporary file, then rename it over
// the old one, so a reader never sees half a value.
func (d *DiskStore) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = cmp.Or(d.TTL, 24*time.Hour)
	}
	f, err := os.CreateTemp(d.Dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	_, err = f.Write(binary.BigEndian.AppendUint64(nil, uint64(d.now().Add(ttl).UnixNano())))
	if err == nil {
		_, err = f.Write(value)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), d.path(key))
}

// Delete implements store.Store.
func (d *DiskStore) Delete(_ context.Context, key string) error {
	if err := os.Remove(d.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// path names a key's file by its hash: keys may hold slashes and be long.
func (d *DiskStore) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(d.Dir, hex.EncodeToString(sum[:]))
}

func (d *DiskStore) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}
