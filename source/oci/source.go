package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/singleflight"

	"github.com/kubegitops/gitops/internal/helmindex"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/internal/treefs"
)

// Source reads OCI artifacts from registries. It implements
// source.Source; it is safe for concurrent use.
type Source struct {
	opts    Options
	fetches singleflight.Group

	mu         sync.Mutex
	transports map[[32]byte]*http.Transport // by transportKey
	snaps      map[string]*Snapshot         // by identity, repository and digest
	order      []string
	snapBytes  int64

	tagLists  atomic.Int64
	downloads atomic.Int64
}

var _ source.Source = (*Source)(nil)

// New returns a Source for opts.
func New(opts Options) *Source {
	return &Source{opts: opts.withDefaults(), snaps: map[string]*Snapshot{}, transports: map[[32]byte]*http.Transport{}}
}

// NewSource returns a Source with DefaultOptions logging to log: the OCI
// artifact source the root package plugs into the engine
// (engine.Options.NewOCISource), which builds none by itself.
func NewSource(log logr.Logger) (source.Source, error) {
	opts := DefaultOptions()
	opts.Logger = log
	return New(opts), nil
}

// Stats counts the network work a Source did.
type Stats struct {
	// TagLists are tag listings (resolves of a semver constraint).
	TagLists int64
	// Downloads are content layers downloaded and extracted.
	Downloads int64
}

// Stats returns the work done so far.
func (s *Source) Stats() Stats {
	return Stats{TagLists: s.tagLists.Load(), Downloads: s.downloads.Load()}
}

// Snapshot is the extracted content layer of one artifact, in memory. It
// implements source.Snapshot, fs.ReadDirFS, fs.ReadFileFS and fs.StatFS;
// TreeHash returns Git object ids of the files as if committed to Git.
type Snapshot struct {
	*treefs.FS
	rev  source.Revision
	size int64
}

// Revision implements source.Snapshot: its Commit is the manifest digest.
func (s *Snapshot) Revision() source.Revision { return s.rev }

// IsDigest reports whether revision pins a manifest digest
// ("sha256:<64 hex>").
func IsDigest(revision string) bool {
	_, err := v1.NewHash(revision)
	return err == nil
}

// Resolve implements source.Source: revision is a digest
// ("sha256:..."), kept as it is once the registry confirms it; a tag,
// resolved to the digest it points at now; or, when no tag is named so, a
// semver constraint ("~1.2", ">=1.0 <2", "1.x", "*") over the
// repository's tags, the highest tag it admits resolved to its digest (a
// tag's "_" read as "+", as Helm and Argo CD write build metadata). The
// Revision's Commit is the digest; tags are asked every time, so a new
// tag under a constraint is seen by the next resolve.
func (s *Source) Resolve(ctx context.Context, repo source.Repository, revision string) (source.Revision, error) {
	rev, err := s.resolve(ctx, repo, revision)
	if err != nil {
		return source.Revision{}, fail(repo, "resolve", revision, err)
	}
	return rev, nil
}

func (s *Source) resolve(ctx context.Context, repo source.Repository, revision string) (source.Revision, error) {
	r, err := checkRepo(repo)
	if err != nil {
		return source.Revision{}, err
	}
	if revision == "" || revision == "HEAD" {
		return source.Revision{}, fmt.Errorf("%w: an OCI source's targetRevision names a tag, a semver constraint or a digest", source.ErrRevisionNotFound)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	ropts, err := s.remoteOptions(ctx, repo.Credentials)
	if err != nil {
		return source.Revision{}, err
	}
	if IsDigest(revision) {
		if _, err := remote.Head(r.Digest(revision), ropts...); err != nil {
			return source.Revision{}, classify(err)
		}
		return source.Revision{Commit: revision}, nil
	}
	desc, headErr := remote.Head(r.Tag(strings.ReplaceAll(revision, "+", "_")), ropts...)
	if headErr == nil {
		return source.Revision{Commit: desc.Digest.String()}, nil
	}
	notFound := classify(headErr)
	if !isConstraint(revision) {
		return source.Revision{}, notFound
	}
	s.tagLists.Add(1)
	tags, err := remote.List(r, ropts...)
	if err != nil {
		return source.Revision{}, classify(err)
	}
	versions := make([]string, 0, len(tags))
	for _, t := range tags {
		versions = append(versions, strings.ReplaceAll(t, "_", "+"))
	}
	version, err := helmindex.Select(helmindex.SortVersions(versions), revision)
	if err != nil {
		return source.Revision{}, fmt.Errorf("%w: %w", source.ErrRevisionNotFound, err)
	}
	desc, err = remote.Head(r.Tag(strings.ReplaceAll(version, "+", "_")), ropts...)
	if err != nil {
		return source.Revision{}, classify(err)
	}
	return source.Revision{Commit: desc.Digest.String()}, nil
}

// isConstraint reports whether revision reads as a semver constraint
// rather than a tag: it holds one of the characters only constraints
// use, or a wildcard element ("1.x", "1.2.*").
func isConstraint(revision string) bool {
	if strings.ContainsAny(revision, "^~<>=*, |") {
		return true
	}
	for _, e := range strings.Split(strings.TrimPrefix(revision, "v"), ".") {
		if e == "x" || e == "X" {
			return true
		}
	}
	return false
}

// Snapshot implements source.Source: the files of the content layer of
// the artifact whose manifest digest is rev.Commit, downloaded and
// extracted once per identity and repository and then served from memory.
func (s *Source) Snapshot(ctx context.Context, repo source.Repository, rev source.Revision) (source.Snapshot, error) {
	snap, err := s.snapshot(ctx, repo, rev)
	if err != nil {
		return nil, fail(repo, "snapshot", rev.Commit, err)
	}
	return snap, nil
}

func (s *Source) snapshot(ctx context.Context, repo source.Repository, rev source.Revision) (*Snapshot, error) {
	r, err := checkRepo(repo)
	if err != nil {
		return nil, err
	}
	if !IsDigest(rev.Commit) {
		return nil, fmt.Errorf("%w: %q is not a manifest digest", source.ErrRevisionNotFound, rev.Commit)
	}
	key := strings.Join([]string{repo.Credentials.Identity(), r.Name(), rev.Commit}, "\x00")
	s.mu.Lock()
	snap, ok := s.snaps[key]
	s.mu.Unlock()
	if ok {
		return snap, nil
	}
	v, err, _ := s.fetches.Do(key, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.Timeout)
		defer cancel()
		files, err := s.download(ctx, repo, r.Name(), rev.Commit)
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
		snap := &Snapshot{FS: tree, rev: source.Revision{Commit: rev.Commit}, size: size}
		s.remember(key, snap)
		return snap, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Snapshot), nil
}

// download reads the manifest at digest, checks it holds one content
// layer of an allowed media type, and extracts that layer.
func (s *Source) download(ctx context.Context, repo source.Repository, artifact, digest string) (map[string][]byte, error) {
	r, _ := checkRepo(repo)
	ropts, err := s.remoteOptions(ctx, repo.Credentials)
	if err != nil {
		return nil, err
	}
	bad := func(entry string, err error) error {
		return &ArtifactError{Artifact: artifact, Digest: digest, Entry: entry, Err: err}
	}
	ref := r.Digest(digest)
	desc, err := remote.Head(ref, ropts...)
	if err != nil {
		return nil, classify(err)
	}
	if desc.Size > s.opts.MaxManifestBytes {
		return nil, bad("", fmt.Errorf("%w: manifest of %d bytes", ErrArtifactTooLarge, desc.Size))
	}
	img, err := remote.Image(ref, ropts...)
	if err != nil {
		if desc.MediaType.IsIndex() {
			return nil, bad("", fmt.Errorf("%w: %s is an index", ErrNotAnArtifact, desc.MediaType))
		}
		return nil, classify(err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, bad("", fmt.Errorf("%w: unreadable manifest", ErrNotAnArtifact))
	}
	if len(m.Layers) > s.opts.MaxLayers {
		return nil, bad("", fmt.Errorf("%w: %d layers, more than %d", ErrNotAnArtifact, len(m.Layers), s.opts.MaxLayers))
	}
	chart := string(m.Config.MediaType) == MediaTypeHelmConfig
	var content *v1.Descriptor
	for i, l := range m.Layers {
		mt := string(l.MediaType)
		isContent := (chart && mt == MediaTypeHelmLayer) || (!chart && isContentLayer(mt))
		if !isContent {
			continue // provenance, attestations: skipped as Argo CD does
		}
		if !slices.Contains(s.opts.MediaTypes, mt) {
			return nil, bad("", fmt.Errorf("%w: layer media type %s is not among the allowed %v", ErrNotAnArtifact, mt, s.opts.MediaTypes))
		}
		if content != nil {
			return nil, bad("", fmt.Errorf("%w: more than one content layer", ErrNotAnArtifact))
		}
		content = &m.Layers[i]
	}
	if content == nil {
		return nil, bad("", fmt.Errorf("%w: no content layer", ErrNotAnArtifact))
	}
	if content.Size > s.opts.MaxLayerBytes {
		return nil, bad("", fmt.Errorf("%w: content layer of %d bytes, more than %d", ErrArtifactTooLarge, content.Size, s.opts.MaxLayerBytes))
	}
	layer, err := remote.Layer(r.Digest(content.Digest.String()), ropts...)
	if err != nil {
		return nil, classify(err)
	}
	rc, err := layer.Compressed()
	if err != nil {
		return nil, classify(err)
	}
	defer rc.Close()
	s.downloads.Add(1)
	body := &limited{r: rc, left: s.opts.MaxLayerBytes, err: fmt.Errorf("%w: content layer past %d bytes", ErrArtifactTooLarge, s.opts.MaxLayerBytes)}
	mt := string(content.MediaType)
	gz := strings.HasSuffix(mt, "tar+gzip") || strings.HasSuffix(mt, "tar.gzip")
	files, err := extract(body, gz, chart, s.opts.Limits)
	if err != nil {
		var ee *entryError
		if errors.As(err, &ee) {
			return nil, bad(ee.entry, ee.err)
		}
		return nil, bad("", err)
	}
	// Drain what the tar's end marker left, so that the layer's digest
	// is verified by go-containerregistry's reader.
	if _, err := io.Copy(io.Discard, body); err != nil {
		return nil, bad("", fmt.Errorf("%w: %v", ErrUnsafeArtifact, err))
	}
	return files, nil
}

// isContentLayer reports whether a layer media type is a (gzipped) tar,
// as Argo CD tells content layers from the rest.
func isContentLayer(mt string) bool {
	return strings.HasSuffix(mt, "tar+gzip") || strings.HasSuffix(mt, "tar.gzip") || strings.HasSuffix(mt, "tar")
}

func (s *Source) remember(key string, snap *Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.snaps[key]; ok {
		return
	}
	for len(s.order) > 0 && s.snapBytes+snap.size > s.opts.MaxCachedBytes {
		s.snapBytes -= s.snaps[s.order[0]].size
		delete(s.snaps, s.order[0])
		s.order = s.order[1:]
	}
	s.snaps[key] = snap
	s.snapBytes += snap.size
	s.order = append(s.order, key)
}

// checkRepo refuses unusable credentials and parses the URL.
func checkRepo(repo source.Repository) (name.Repository, error) {
	if c := repo.Credentials; c != nil && c.Err != nil {
		// A repository Secret that cannot be used: refuse rather than read
		// anonymously or with part of its settings.
		return name.Repository{}, c.Err
	}
	return repository(repo)
}

// fail wraps err as a *source.Error naming the repository (redacted).
func fail(repo source.Repository, op, revision string, err error) error {
	return &source.Error{Repository: source.RedactURL(repo.URL), Op: op, Revision: revision, Err: err}
}

// String names the Source; it never prints what it holds.
func (s *Source) String() string { return "oci.Source" }
