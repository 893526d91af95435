package helmrepo

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/internal/treefs"
)

// Source reads Helm charts from chart repositories and OCI registries. It
// implements source.Source; Repository.Chart names the chart. It is safe
// for concurrent use.
type Source struct {
	opts  Options
	store *diskStore

	indexes *listCache // parsed indexes and tag lists, per identity and URL
	fetches singleflight.Group

	mu        sync.Mutex
	clients   map[string]*clients  // by credentials identity
	snaps     map[string]*Snapshot // unpacked charts by archive digest
	order     []string
	snapBytes int64
	pins      map[string]string // pinKey -> archive digest, as on disk

	indexRequests atomic.Int64
	tagRequests   atomic.Int64
	downloads     atomic.Int64
}

// Stats counts the network requests a Source made.
type Stats struct {
	// IndexRequests are index.yaml downloads.
	IndexRequests int64
	// TagRequests are OCI tag listings.
	TagRequests int64
	// Downloads are chart archive downloads (HTTP or OCI pulls).
	Downloads int64
}

// maxSnapshots and maxSnapshotBytes bound the unpacked charts kept in
// memory (oldest first out); a snapshot handed out stays valid.
const (
	maxSnapshots     = 64
	maxSnapshotBytes = 256 << 20
)

var _ source.Source = (*Source)(nil)

// New returns a Source. It creates Options.CacheDir if needed.
func New(opts Options) (*Source, error) {
	opts = opts.withDefaults()
	st, err := newDiskStore(opts.CacheDir, opts.MaxCacheBytes)
	if err != nil {
		return nil, err
	}
	return &Source{opts: opts, store: st, indexes: newListCache(opts.IndexTTL),
		clients: map[string]*clients{}, snaps: map[string]*Snapshot{}, pins: map[string]string{}}, nil
}

// ChartSource returns a Source with DefaultOptions logging to log: the
// chart source the root package plugs into the engine
// (engine.Options.NewChartSource), which builds none by itself.
func ChartSource(log logr.Logger) (source.Source, error) {
	opts := DefaultOptions()
	opts.Logger = log
	return New(opts)
}

// Stats returns the requests made so far.
func (s *Source) Stats() Stats {
	return Stats{IndexRequests: s.indexRequests.Load(), TagRequests: s.tagRequests.Load(), Downloads: s.downloads.Load()}
}

// CacheBytes returns the bytes of indexes and archives held on disk.
func (s *Source) CacheBytes() int64 { return s.store.bytes() }

// IsOCI reports whether repo is read as an OCI registry: an oci:// URL,
// credentials with EnableOCI, or, as Argo CD decides it, a URL without a
// scheme whose first element is a host ("registry.example.com/charts",
// "10.0.0.7:5000/charts"): a chart repository over HTTP always has one.
func IsOCI(repo source.Repository) bool {
	return strings.HasPrefix(repo.URL, "oci://") || (repo.Credentials != nil && repo.Credentials.EnableOCI) || schemeLessRegistry(repo.URL)
}

// schemeLessRegistry reports whether u is a registry reference without a
// scheme: no "://", and a host (with an optional port) before the first
// "/".
func schemeLessRegistry(u string) bool {
	if u == "" || strings.Contains(u, "://") {
		return false
	}
	parsed, err := url.ParseRequestURI("registry://" + u)
	return err == nil && parsed.Host != ""
}

// Resolve implements source.Source: revision is a chart version or a
// semver constraint ("" means the highest version), matched as Helm
// matches it. The Revision's Commit is the version found.
func (s *Source) Resolve(ctx context.Context, repo source.Repository, revision string) (source.Revision, error) {
	if err := checkRepo(repo); err != nil {
		return source.Revision{}, s.fail(repo, "resolve", revision, err)
	}
	var version string
	var err error
	if IsOCI(repo) {
		version, err = s.resolveOCI(ctx, repo, revision)
	} else {
		version, err = s.resolveHTTP(ctx, repo, revision)
	}
	if err != nil {
		return source.Revision{}, s.fail(repo, "resolve", revision, err)
	}
	return source.Revision{Commit: version}, nil
}

// Snapshot implements source.Source: the files of the chart at
// rev.Commit (a version Resolve returned), downloaded once and then read
// from the cache.
func (s *Source) Snapshot(ctx context.Context, repo source.Repository, rev source.Revision) (source.Snapshot, error) {
	if err := checkRepo(repo); err != nil {
		return nil, s.fail(repo, "snapshot", rev.Commit, err)
	}
	key := pinKey(repo, rev.Commit)
	s.mu.Lock()
	snap, ok := s.snaps[s.pins[key]]
	s.mu.Unlock()
	if ok {
		return snap, nil
	}
	v, err, _ := s.fetches.Do(key, func() (any, error) {
		digest, data, err := s.archive(ctx, repo, rev.Commit, key)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.pins[key] = digest
		snap, ok := s.snaps[digest]
		s.mu.Unlock()
		if ok {
			return snap, nil
		}
		files, err := unpack(repo.Chart, rev.Commit, data, s.opts.Limits)
		if err != nil {
			return nil, err
		}
		tree, err := treefs.FromFiles(files)
		if err != nil {
			return nil, err
		}
		var size int64
		for _, data := range files {
			size += int64(len(data))
		}
		snap = &Snapshot{FS: tree, rev: rev, size: size}
		s.remember(digest, snap)
		return snap, nil
	})
	if err != nil {
		return nil, s.fail(repo, "snapshot", rev.Commit, err)
	}
	return v.(*Snapshot), nil
}

// archive returns the archive of a chart version: pinned in the cache, or
// downloaded, stored and pinned.
func (s *Source) archive(ctx context.Context, repo source.Repository, version, key string) (string, []byte, error) {
	if d, ok := s.store.pinned(key); ok {
		if data, ok := s.store.get(d); ok {
			return d, data, nil
		}
	}
	var data []byte
	var err error
	if IsOCI(repo) {
		data, err = s.pullOCI(ctx, repo, version)
	} else {
		data, err = s.downloadHTTP(ctx, repo, version)
	}
	if err != nil {
		return "", nil, err
	}
	d, err := s.store.put(data)
	if err != nil {
		return "", nil, err
	}
	if err := s.store.pin(key, d); err != nil {
		return "", nil, err
	}
	return d, data, nil
}

func (s *Source) remember(digest string, snap *Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.snaps[digest]; ok {
		return
	}
	for len(s.order) > 0 && (len(s.order) >= maxSnapshots || s.snapBytes+snap.size > maxSnapshotBytes) {
		s.snapBytes -= s.snaps[s.order[0]].size
		delete(s.snaps, s.order[0])
		s.order = s.order[1:]
	}
	s.snaps[digest] = snap
	s.snapBytes += snap.size
	s.order = append(s.order, digest)
}

// pinKey names a chart version of a repository as seen by one identity.
// It holds a digest of the credentials, never the credentials.
func pinKey(repo source.Repository, version string) string {
	return strings.Join([]string{"v1", repo.Credentials.Identity(), repoBase(repo), repo.Chart, version}, "\x00")
}

// repoBase is the repository URL without a trailing slash.
func repoBase(repo source.Repository) string { return strings.TrimSuffix(repo.URL, "/") }

func checkRepo(repo source.Repository) error {
	if c := repo.Credentials; c != nil && c.Err != nil {
		// A repository Secret that cannot be used: refuse rather than read
		// anonymously or with part of its settings.
		return c.Err
	}
	if repo.Chart == "" {
		return fmt.Errorf("%w: no chart name", source.ErrInvalidRepository)
	}
	if strings.ContainsAny(repo.Chart, "/\\:@?#") || repo.Chart == "." || repo.Chart == ".." {
		return fmt.Errorf("%w: chart name %q is not a name", source.ErrInvalidRepository, repo.Chart)
	}
	return nil
}

// fail wraps err as a *source.Error naming the repository (redacted) and
// the chart.
func (s *Source) fail(repo source.Repository, op, revision string, err error) error {
	return &source.Error{Repository: source.RedactURL(repo.URL) + " chart " + repo.Chart, Op: op, Revision: revision, Err: err}
}

// clients are the HTTP and OCI clients of one identity.
type clients struct {
	http *http.Client
	oci  *registry.Client
}

func (s *Source) clientsFor(repo source.Repository) (*clients, error) {
	id := repo.Credentials.Identity()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[id]; ok {
		return c, nil
	}
	maxBody := max(s.opts.MaxArchiveBytes, s.opts.MaxIndexBytes)
	hc, err := newHTTPClient(s.opts, repo.Credentials, maxBody)
	if err != nil {
		return nil, err
	}
	oc, err := newRegistryClient(s.opts, repo.Credentials, hc)
	if err != nil {
		return nil, err
	}
	c := &clients{http: hc, oci: oc}
	s.clients[id] = c
	return c, nil
}

// String names the Source by its cache directory; it never prints the
// clients, pins or credentials it holds.
func (s *Source) String() string { return fmt.Sprintf("helmrepo.Source(cache %s)", s.opts.CacheDir) }

// Format implements fmt.Formatter: every verb prints String.
func (s *Source) Format(f fmt.State, _ rune) { fmt.Fprint(f, s.String()) }

// Archive resolves revision (a version or a constraint) as Resolve does
// and returns the chart's archive, from the cache when this version was
// fetched before. Chart dependencies are fetched through it.
func (s *Source) Archive(ctx context.Context, repo source.Repository, revision string) (source.Revision, []byte, error) {
	rev, err := s.Resolve(ctx, repo, revision)
	if err != nil {
		return source.Revision{}, nil, err
	}
	key := pinKey(repo, rev.Commit)
	v, err, _ := s.fetches.Do("archive\x00"+key, func() (any, error) {
		_, data, err := s.archive(ctx, repo, rev.Commit, key)
		return data, err
	})
	if err != nil {
		return source.Revision{}, nil, s.fail(repo, "fetch", rev.Commit, err)
	}
	data := v.([]byte)
	// The archive passes the same unpacking rules as a chart source's
	// before Helm sees it.
	if _, err := unpack(repo.Chart, rev.Commit, data, s.opts.Limits); err != nil {
		return source.Revision{}, nil, s.fail(repo, "fetch", rev.Commit, err)
	}
	return rev, data, nil
}

// Invalidate forgets the index (or OCI tag list) of repo's URL under every
// identity, so that the next Resolve asks the repository again (Argo CD's
// hard refresh). Fetched archives stay cached: a version never changes.
func (s *Source) Invalidate(repo source.Repository) {
	base := repoBase(repo)
	s.indexes.dropMatching(func(key string) bool {
		parts := strings.Split(key, "\x00")
		if len(parts) != 3 {
			return false
		}
		return parts[2] == base || strings.HasPrefix(parts[2], strings.TrimPrefix(base, "oci://")+"/")
	})
}
