package desired

import (
	"context"
	"errors"
	"fmt"
	"strings"
	gosync "sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/dir"
	"github.com/kubegitops/gitops/source/git"
)

// ErrNoChartSource is the error, wrapped with the source's name, of a
// chart source (spec.source.chart) read by an engine built without a
// chart source: package engine does not build one by itself.
var ErrNoChartSource = errors.New("no chart source: the engine was built without one; " +
	"plug one in with Options.ChartSource or Options.NewChartSource (gitops.New and gitops.DefaultOptions plug in source/helmrepo)")

// ErrNoOCISource is the error, wrapped with the source's name, of an OCI
// artifact source (an oci:// repoURL without a chart) read by an engine
// built without an OCI source: package engine does not build one by
// itself.
var ErrNoOCISource = errors.New("no OCI artifact source: the engine was built without one; " +
	"plug one in with Options.NewOCISource (gitops.New and gitops.DefaultOptions plug in source/oci)")

// SourcesConfig configures Sources: the host's collaborators (each may be
// nil) and the settings of the built-in sources.
type SourcesConfig struct {
	// SourceFor picks the Source of a repository URL (Options.SourceFor).
	// Nil: local folders from source/dir, everything else from Git.
	SourceFor func(repoURL string) (source.Source, error)
	// ChartSource reads chart sources (Options.ChartSource). Nil: the one
	// NewChartSource builds on first use.
	ChartSource source.Source
	// NewChartSource builds the chart source on first use
	// (Options.NewChartSource). Nil with ChartSource nil: a chart source
	// fails with ErrNoChartSource.
	NewChartSource func(log logr.Logger) (source.Source, error)
	// NewOCISource builds the source of OCI artifacts (oci:// repository
	// URLs of sources without a chart) on first use
	// (Options.NewOCISource). Nil: such a source fails with
	// ErrNoOCISource.
	NewOCISource func(log logr.Logger) (source.Source, error)
	// Credentials returns the credentials with which an app of project
	// (ProjectName) reads repoURL, or nil. Nil: none.
	Credentials func(project, repoURL string) *source.Credentials
	// RefCacheTTL is the built-in Git source's resolve cache TTL.
	RefCacheTTL time.Duration
	// Registerer and Log go to the built-in sources.
	Registerer prometheus.Registerer
	Log        logr.Logger
	// GitRequest, when set, is told of every resolve and snapshot
	// (op "resolve" or "fetch") with its outcome, for metrics.
	GitRequest func(repoURL, op string, err error)
}

// Sources looks up the Source of an app source and resolves and fetches
// through it. The built-in sources (Git, local folder) and the chart
// source NewChartSource builds are made on first use, one per kind, for the
// Sources' life, so Git
// object stores and resolve caches are shared by every app.
type Sources struct {
	cfg   SourcesConfig
	mu    gosync.Mutex
	built map[string]source.Source
}

// NewSources returns the Sources of cfg.
func NewSources(cfg SourcesConfig) *Sources {
	if cfg.Log.GetSink() == nil {
		cfg.Log = logr.Discard()
	}
	return &Sources{cfg: cfg, built: map[string]source.Source{}}
}

// For returns the Source of a repository URL: SourcesConfig.SourceFor's
// when set; else a local folder's, an OCI registry's (oci://, the source
// NewOCISource builds) or Git's.
func (s *Sources) For(repoURL string) (source.Source, error) {
	if s.cfg.SourceFor != nil {
		return s.cfg.SourceFor(repoURL)
	}
	kind := "git"
	switch {
	case strings.HasPrefix(repoURL, "file://") || strings.HasPrefix(repoURL, "/"):
		kind = "dir"
	case strings.HasPrefix(repoURL, "oci://"):
		kind = "oci"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if src, ok := s.built[kind]; ok {
		return src, nil
	}
	var src source.Source
	if kind == "oci" {
		if s.cfg.NewOCISource == nil {
			return nil, fmt.Errorf("%s: %w", source.RedactURL(repoURL), ErrNoOCISource)
		}
		o, err := s.cfg.NewOCISource(s.cfg.Log)
		if err != nil {
			return nil, fmt.Errorf("OCI source: %w", err)
		}
		src = o
	} else if kind == "dir" {
		src = dir.New(dir.DefaultOptions())
	} else {
		gopts := git.DefaultOptions()
		gopts.Registerer = s.cfg.Registerer
		gopts.Logger = s.cfg.Log
		gopts.ResolveTTL = s.cfg.RefCacheTTL
		g, err := git.New(gopts)
		if err != nil {
			return nil, err
		}
		src = g
	}
	s.built[kind] = src
	return src, nil
}

// Chart returns the Source of chart sources: SourcesConfig.ChartSource,
// or the one NewChartSource builds on first use; ErrNoChartSource without
// either.
func (s *Sources) Chart() (source.Source, error) {
	if s.cfg.ChartSource != nil {
		return s.cfg.ChartSource, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if src, ok := s.built["helm"]; ok {
		return src, nil
	}
	if s.cfg.NewChartSource == nil {
		return nil, ErrNoChartSource
	}
	src, err := s.cfg.NewChartSource(s.cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("chart source: %w", err)
	}
	s.built["helm"] = src
	return src, nil
}

// credentials returns the credentials with which an app of project reads
// a repository, or nil.
func (s *Sources) credentials(project, repoURL string) *source.Credentials {
	if s.cfg.Credentials == nil {
		return nil
	}
	return s.cfg.Credentials(project, repoURL)
}

// ProjectName is the name of an app's project: spec.project, "default"
// when empty (Argo CD's default).
func ProjectName(app *v1alpha1.Application) string {
	if app.Spec.Project == "" {
		return "default"
	}
	return app.Spec.Project
}

// Invalidate forgets what the sources know of a repository's branches
// and tags (and, for a chart repository, its index).
func (s *Sources) Invalidate(repoURL string) {
	type invalidator interface{ Invalidate(source.Repository) }
	if src, err := s.For(repoURL); err == nil {
		if inv, ok := src.(invalidator); ok {
			inv.Invalidate(source.Repository{URL: repoURL})
		}
	}
	// The same URL may be a chart repository: its index is read again too.
	if src, err := s.Chart(); err == nil {
		if inv, ok := src.(invalidator); ok {
			inv.Invalidate(source.Repository{URL: repoURL})
		}
	}
}

// Of returns the Source and Repository of one source of an app of
// project (ProjectName): the chart source for a chart, else the source of
// its repository URL, with the credentials an app of project reads it
// with.
func (s *Sources) Of(project string, src v1alpha1.ApplicationSource) (source.Source, source.Repository, error) {
	if src.Helm != nil && src.Helm.PassCredentials {
		return nil, source.Repository{}, fmt.Errorf("%s: helm.passCredentials is not supported: a repository's credentials are only sent to its own host", source.RedactURL(src.RepoURL))
	}
	repo := source.Repository{URL: src.RepoURL, Chart: src.Chart, TagPrefix: src.TagPrefix, Credentials: s.credentials(project, src.RepoURL)}
	var got source.Source
	var err error
	if src.Chart != "" {
		if got, err = s.Chart(); err != nil {
			err = fmt.Errorf("%s: %w", SourceName(src), err)
		}
	} else {
		got, err = s.For(src.RepoURL)
	}
	return got, repo, err
}

// Resolve resolves one source of an app of project at target.
func (s *Sources) Resolve(ctx context.Context, project string, src v1alpha1.ApplicationSource, target string) (source.Revision, error) {
	got, repo, err := s.Of(project, src)
	if err != nil {
		return source.Revision{}, err
	}
	return got.Resolve(ctx, repo, target)
}

// ResolveAll resolves every source of app at its targetRevision, as
// Builder.Build would: fresh (a hard refresh) drops each repository's
// resolve cache first.
func (s *Sources) ResolveAll(ctx context.Context, app *v1alpha1.Application, fresh bool) ([]source.Revision, error) {
	srcs := app.Spec.AllSources()
	revs := make([]source.Revision, len(srcs))
	for i, src := range srcs {
		got, repo, err := s.Of(ProjectName(app), src)
		if err != nil {
			return nil, err
		}
		if fresh {
			s.Invalidate(src.RepoURL)
		}
		if revs[i], err = s.resolveOne(ctx, i, got, repo, src, src.TargetRevision); err != nil {
			return nil, err
		}
	}
	return revs, nil
}

// fetch resolves one source of an app of project at target (unless known
// holds its revision already) and opens its snapshot.
func (s *Sources) fetch(ctx context.Context, i int, project string, src v1alpha1.ApplicationSource, target string, known *source.Revision) (source.Revision, source.Snapshot, error) {
	got, repo, err := s.Of(project, src)
	if err != nil {
		return source.Revision{}, nil, err
	}
	var rev source.Revision
	if known != nil {
		rev = *known
	} else if rev, err = s.resolveOne(ctx, i, got, repo, src, target); err != nil {
		return source.Revision{}, nil, err
	}
	snap, err := got.Snapshot(ctx, repo, rev)
	s.counted(src.RepoURL, "fetch", err)
	if err != nil {
		return source.Revision{}, nil, fmt.Errorf("source %d: snapshot %s at %s: %w", i, SourceName(src), rev.Commit, err)
	}
	return rev, snap, nil
}

// resolveOne resolves one source of an app at target, counted as a Git
// request.
func (s *Sources) resolveOne(ctx context.Context, i int, got source.Source, repo source.Repository, src v1alpha1.ApplicationSource, target string) (source.Revision, error) {
	rev, err := got.Resolve(ctx, repo, target)
	s.counted(src.RepoURL, "resolve", err)
	if err != nil {
		var named *source.Error
		if errors.As(err, &named) && named.Repository != "" {
			// It names the repository, the operation and the revision:
			// saying them again only lengthens the message.
			return source.Revision{}, fmt.Errorf("source %d: %w", i, err)
		}
		return source.Revision{}, fmt.Errorf("source %d: resolve %s at %q: %w", i, SourceName(src), target, err)
	}
	return rev, nil
}

func (s *Sources) counted(repoURL, op string, err error) {
	if s.cfg.GitRequest != nil {
		s.cfg.GitRequest(repoURL, op, err)
	}
}

// SourceName names a source in errors, without credentials.
func SourceName(src v1alpha1.ApplicationSource) string {
	name := source.RedactURL(src.RepoURL)
	if src.Chart != "" {
		name += " chart " + src.Chart
	}
	return name
}

// JoinRevisions writes the revisions of an app's sources as one string:
// the commit of a single-source app, or the commits joined by commas.
func JoinRevisions(revs []string) string { return strings.Join(revs, ",") }
