package git

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/internal/treefs"
)

// Source is a source.Source for Git repositories over HTTPS, HTTP and SSH.
// It is safe for concurrent use; one Source should serve a whole process so
// that its ref cache and object stores are shared.
type Source struct {
	opts          Options
	httpTransport *http.Transport
	refs          *refCache
	fetches       singleflight.Group
	metrics       *metrics
	// maxPacks and maxThinPackBytes are the defaults; tests lower them.
	maxPacks         int
	maxThinPackBytes int64

	// trees are decoded Git trees, shared by every snapshot (content
	// named by hash: the same for every repository and generation).
	trees *treefs.Trees

	mu     sync.Mutex
	stores map[string]*objectStore
	// tlsTransports are connection pools of credentials with their own
	// CA or client certificate, by credentials identity.
	tlsTransports map[string]*http.Transport
	// lfsScans are the LFS pointers of the commits read with EnableLFS.
	lfsScans *lru.Cache[string, *lfsScan]
}

var _ source.Source = (*Source)(nil)

// sharedTrees is how many decoded Git trees (folders) a Source keeps for
// its snapshots to share, the least recently used going first. The folders
// on every app's path (a monorepo's root and its apps/ folder) are used by
// every refresh and stay; an app's own small folder may be decoded again.
// A decoded folder keeps about 61 bytes per entry (names of 9 characters;
// treefs's TestDecodedTreeCostPerEntry holds it under 96): 256 folders of
// 10,000 entries would be 160 to 250 MB, a bound no real repository
// reaches.
const sharedTrees = 256

// lfsScanEntries is how many commits' LFS pointer lists a Source keeps.
const lfsScanEntries = 1024

// session is the part of a go-git upload-pack session this package uses;
// the SSH transport of this package implements it too.
type session interface {
	AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error)
	UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error)
	Close() error
}

// New returns a Source storing objects under opts.CacheDir. Zero CacheDir,
// Timeout and Depth take their defaults; a zero Logger discards. The cache
// directory is created (mode 0700) if missing.
func New(opts Options) (*Source, error) {
	def := DefaultOptions()
	if opts.CacheDir == "" {
		opts.CacheDir = def.CacheDir
	}
	if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("git source: cache directory: %w", err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = def.Timeout
	}
	switch {
	case opts.Depth == 0:
		opts.Depth = def.Depth
	case opts.Depth < 0:
		opts.Depth = unshallowDepth // the whole history, deepening any shallow commits
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = def.Logger
	}
	opts.LFS = opts.LFS.withDefaults()
	scans, _ := lru.New[string, *lfsScan](lfsScanEntries) // errs only for a size below one
	return &Source{
		lfsScans:         scans,
		opts:             opts,
		trees:            treefs.NewTrees(sharedTrees),
		httpTransport:    newHTTPTransport(opts),
		refs:             newRefCache(opts.ResolveTTL),
		metrics:          newMetrics(opts.Registerer),
		maxThinPackBytes: defaultMaxThinPackBytes,
		stores:           map[string]*objectStore{},
		tlsTransports:    map[string]*http.Transport{},
	}, nil
}

// Resolve turns revision into a commit with one ls-remote (shared by every
// concurrent caller and cached for ResolveTTL per repository). The rules
// are those of resolveIn: HEAD, refs/..., tag, branch, semver constraint
// over tags (over the tags starting with repo.TagPrefix when set), short
// tip id. A full commit id resolves without any network
// call. Errors are *source.Error wrapping a source sentinel.
func (s *Source) Resolve(ctx context.Context, repo source.Repository, revision string) (source.Revision, error) {
	e, err := parseEndpoint(repo, s.opts.Policy)
	if err != nil {
		return source.Revision{}, wrapErr(endpoint{redacted: source.RedactURL(repo.URL)}, "resolve", revision, err)
	}
	if isFullHash(revision) {
		return source.Revision{Commit: revision}, nil
	}
	var miss atomic.Bool
	t, err := s.refs.get(ctx, e.storeKey(), source.RepositoryKey(e.redacted), func(ctx context.Context) (refTable, error) {
		miss.Store(true)
		t, err := s.listRefs(ctx, e)
		s.metrics.request("ls-remote", err)
		return t, err
	})
	if miss.Load() {
		s.metrics.resolves.WithLabelValues("miss").Inc()
	} else {
		s.metrics.resolves.WithLabelValues("hit").Inc()
	}
	if err != nil {
		return source.Revision{}, wrapErr(e, "resolve", revision, err)
	}
	rev, err := resolveIn(t, revision, repo.TagPrefix)
	if err != nil {
		return source.Revision{}, wrapErr(e, "resolve", revision, err)
	}
	return rev, nil
}

// Invalidate forgets the cached refs of the repository at repo.URL, under
// every set of credentials and whatever URL form was used (repositories
// are matched by source.RepositoryKey), so that the next Resolve asks the
// server. Call it on a webhook for that repository; credentials are not
// needed.
func (s *Source) Invalidate(repo source.Repository) {
	s.refs.invalidate(source.RepositoryKey(repo.URL))
}

// listRefs is one ls-remote, bounded by Options.Timeout.
func (s *Source) listRefs(ctx context.Context, e endpoint) (refTable, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	sess, err := s.openSession(ctx, e)
	if err != nil {
		return refTable{}, timeoutOr(ctx, err)
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return refTable{}, timeoutOr(ctx, err)
	}
	s.opts.Logger.V(1).Info("listed refs", "repository", e.redacted, "refs", len(ar.References))
	return tableFromAdv(ar), nil
}

// Snapshot returns a read-only tree of rev.Commit, fetching it first when
// the object store does not have it. Concurrent snapshots of one commit
// share one fetch; fetches of one repository run one at a time, and no
// lock is held once the commit is in the store.
func (s *Source) Snapshot(ctx context.Context, repo source.Repository, rev source.Revision) (source.Snapshot, error) {
	snap, err := s.snapshot(ctx, repo, rev)
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// OpenSnapshot is Snapshot with the concrete type.
func (s *Source) OpenSnapshot(ctx context.Context, repo source.Repository, rev source.Revision) (*Snapshot, error) {
	return s.snapshot(ctx, repo, rev)
}

func (s *Source) snapshot(ctx context.Context, repo source.Repository, rev source.Revision) (*Snapshot, error) {
	e, err := parseEndpoint(repo, s.opts.Policy)
	if err != nil {
		return nil, wrapErr(endpoint{redacted: source.RedactURL(repo.URL)}, "snapshot", rev.Commit, err)
	}
	if !isFullHash(rev.Commit) {
		return nil, wrapErr(e, "snapshot", rev.Commit, fmt.Errorf("not a full commit id (Resolve it first): %w", source.ErrRevisionNotFound))
	}
	h := plumbing.NewHash(rev.Commit)
	store, err := s.store(e)
	if err != nil {
		return nil, wrapErr(e, "snapshot", rev.Commit, err)
	}
	// Open from the current generation when it has the commit; otherwise
	// fetch and try again once (a fetch may start a new generation between
	// our fetch and our open).
	for attempt := 0; ; attempt++ {
		g := store.current()
		if g.acquire() {
			if g.hasCommit(h) {
				snap, err := openSnapshot(g, h, rev, s.trees)
				if err != nil {
					return nil, wrapErr(e, "snapshot", rev.Commit, err)
				}
				if e.creds != nil && e.creds.EnableLFS {
					if err := s.attachLFS(ctx, e, snap, h); err != nil {
						_ = snap.Close()
						// An *LFSError names files and objects and quotes
						// no server: it stays in the chain.
						return nil, &source.Error{Repository: e.redacted, Op: "lfs", Revision: rev.Commit, Err: err}
					}
				}
				return snap, nil
			}
			g.release()
		}
		if attempt == 1 {
			return nil, wrapErr(e, "snapshot", rev.Commit, fmt.Errorf("commit %s: %w", h, source.ErrRevisionNotFound))
		}
		if err := s.fetchShared(ctx, e, store, h); err != nil {
			return nil, wrapErr(e, "fetch", rev.Commit, err)
		}
	}
}

// fetchShared makes concurrent callers wanting the same commit share one
// fetch, run detached from any one caller (bounded by Options.Timeout);
// each caller returns when its own ctx ends.
func (s *Source) fetchShared(ctx context.Context, e endpoint, store *objectStore, h plumbing.Hash) error {
	key := e.storeKey() + "/" + h.String()
	ch := s.fetches.DoChan(key, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.Timeout)
		defer cancel()
		if err := store.lock(fctx); err != nil {
			return nil, timeoutOr(fctx, err)
		}
		defer store.unlock()
		if store.hasCommit(h) {
			return nil, nil
		}
		s.opts.Logger.V(1).Info("fetching", "repository", e.redacted, "commit", h.String(), "depth", s.opts.Depth)
		start := time.Now()
		err := timeoutOr(fctx, s.fetchCommit(fctx, e, store, h))
		s.metrics.fetched(start, err)
		return nil, err
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// store returns the object store of e, creating it on first use.
func (s *Source) store(e endpoint) (*objectStore, error) {
	key := e.storeKey()
	s.mu.Lock()
	o, ok := s.stores[key]
	if !ok {
		o = newObjectStore(filepath.Join(s.opts.CacheDir, key), s.maxPacks)
		s.stores[key] = o
	}
	s.mu.Unlock()
	return o, o.init()
}

// openSession connects to e with the transport its scheme needs.
func (s *Source) openSession(ctx context.Context, e endpoint) (session, error) {
	switch e.url.Scheme {
	case "ssh":
		return s.dialSSH(ctx, e)
	default:
		return s.newHTTPSession(e)
	}
}

// timeoutOr reports ErrTimeout when ctx's deadline passed, whatever error
// the transport produced on the way out.
func timeoutOr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errTimeout
	}
	return err
}

// ChangedPaths lists the files under dir ("." for all) that differ between
// two commits, comparing tree hashes so that unchanged subtrees are not
// read (see source.ChangedPaths). Both commits are fetched if needed.
func (s *Source) ChangedPaths(ctx context.Context, repo source.Repository, from, to source.Revision, dir string) ([]string, error) {
	a, err := s.snapshot(ctx, repo, from)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	b, err := s.snapshot(ctx, repo, to)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	out, err := source.ChangedPaths(a, b, dir)
	if err != nil {
		return nil, &source.Error{Repository: source.RedactURL(repo.URL), Op: "diff", Revision: from.Commit + ".." + to.Commit, Err: err}
	}
	return out, nil
}

// Close releases idle network connections and open pack files. Object
// stores stay on disk for the next Source on the same CacheDir; open
// snapshots stay readable (they reopen files on demand).
func (s *Source) Close() error {
	s.httpTransport.CloseIdleConnections()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.stores {
		o.close()
	}
	return nil
}
