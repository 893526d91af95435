package helmrepo

import (
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubegitops/gitops/source"
)

// Options configure a Source. Start from DefaultOptions.
type Options struct {
	// CacheDir holds indexes and chart archives by digest. Default:
	// DefaultCacheDir().
	CacheDir string
	// MaxCacheBytes bounds the bytes kept in CacheDir; past it the least
	// recently used files are removed. Default 1 GiB.
	MaxCacheBytes int64
	// IndexTTL is how long a repository's index (or an OCI repository's
	// tag list) is reused before the next request. Default 1 min. Zero
	// disables reuse (concurrent resolves still share one request).
	IndexTTL time.Duration
	// Timeout bounds every network request. Default 60 s.
	Timeout time.Duration
	// MaxIndexBytes bounds an index.yaml. Default 32 MiB.
	MaxIndexBytes int64
	// MaxArchiveBytes bounds a chart archive as downloaded. Default 16 MiB.
	MaxArchiveBytes int64
	// Limits bound an archive once unpacked.
	Limits Limits
	// Policy, when set, restricts which URLs and addresses may be reached.
	Policy *source.URLPolicy
	// PlainHTTP lets OCI registries be reached over plain HTTP (for
	// registries on loopback in tests). Default false.
	PlainHTTP bool
	// Logger receives debug logs (V(1)); never credentials.
	Logger logr.Logger
}

// Limits bound an unpacked chart archive.
type Limits struct {
	// MaxTotalBytes bounds the bytes of all files. Default 64 MiB.
	MaxTotalBytes int64
	// MaxFileBytes bounds one file. Default 8 MiB.
	MaxFileBytes int64
	// MaxFiles bounds the number of entries. Default 10,000.
	MaxFiles int
}

// DefaultOptions returns the defaults documented on Options.
func DefaultOptions() Options {
	return Options{
		CacheDir:        DefaultCacheDir(),
		MaxCacheBytes:   1 << 30,
		IndexTTL:        time.Minute,
		Timeout:         60 * time.Second,
		MaxIndexBytes:   32 << 20,
		MaxArchiveBytes: 16 << 20,
		Limits:          Limits{MaxTotalBytes: 64 << 20, MaxFileBytes: 8 << 20, MaxFiles: 10000},
		Logger:          logr.Discard(),
	}
}

// DefaultCacheDir is "gitops/charts" under the user's cache directory, or
// under the temporary directory when the user has none.
func DefaultCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		base = os.TempDir()
	}
	return filepath.Join(base, "gitops", "charts")
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.CacheDir == "" {
		o.CacheDir = d.CacheDir
	}
	if o.MaxCacheBytes <= 0 {
		o.MaxCacheBytes = d.MaxCacheBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	if o.MaxIndexBytes <= 0 {
		o.MaxIndexBytes = d.MaxIndexBytes
	}
	if o.MaxArchiveBytes <= 0 {
		o.MaxArchiveBytes = d.MaxArchiveBytes
	}
	if o.Limits.MaxTotalBytes <= 0 {
		o.Limits.MaxTotalBytes = d.Limits.MaxTotalBytes
	}
	if o.Limits.MaxFileBytes <= 0 {
		o.Limits.MaxFileBytes = d.Limits.MaxFileBytes
	}
	if o.Limits.MaxFiles <= 0 {
		o.Limits.MaxFiles = d.Limits.MaxFiles
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o
}
