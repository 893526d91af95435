package git

import (
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubegitops/gitops/source"
)

// Options configure a Source. Start from DefaultOptions.
type Options struct {
	// CacheDir holds one bare object store per repository (and per set of
	// credentials, so that one tenant's fetched objects are never served to
	// another without credentials). Default: DefaultCacheDir().
	CacheDir string
	// Timeout bounds every network operation (one ls-remote, one fetch),
	// on top of the caller's context. Default 90 s.
	Timeout time.Duration
	// ResolveTTL is how long the refs advertised by a repository are reused
	// before the next ls-remote. All resolves of one repository within the
	// TTL, for any ref, share one ls-remote; concurrent resolves share the
	// one in flight. Default 1 min. Zero disables caching (concurrent
	// resolves still share one call).
	ResolveTTL time.Duration
	// Depth is the history depth fetched for a commit. Default (and 0) 1:
	// only the wanted commit and its tree. A negative depth fetches the
	// whole history.
	Depth int
	// Policy, when set, restricts which URLs and addresses may be reached.
	Policy *source.URLPolicy
	// Logger receives debug logs (V(1)); never credentials.
	Logger logr.Logger
	// Registerer, when set, receives the request, resolve-cache and fetch
	// duration metrics (gitops_source_git_*).
	Registerer prometheus.Registerer
	// LFS bounds the Git LFS objects a snapshot fetches when its
	// repository's credentials set EnableLFS. Zero fields take
	// DefaultLFSOptions'.
	LFS LFSOptions
}

// DefaultOptions returns the defaults: DefaultCacheDir, 90 s timeout,
// 1 min resolve TTL, depth 1, no URL policy, a discarding logger, no
// metrics.
func DefaultOptions() Options {
	return Options{
		CacheDir:   DefaultCacheDir(),
		Timeout:    90 * time.Second,
		ResolveTTL: time.Minute,
		Depth:      1,
		Logger:     logr.Discard(),
		LFS:        DefaultLFSOptions(),
	}
}

// DefaultCacheDir is "gitops/git" under the user's cache directory
// ($XDG_CACHE_HOME or ~/.cache), or under the temporary directory when the
// user has none.
func DefaultCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		base = os.TempDir()
	}
	return filepath.Join(base, "gitops", "git")
}
