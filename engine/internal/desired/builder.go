package desired

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
)

// Config is a Builder's settings and collaborators.
type Config struct {
	// Sources looks up, resolves and fetches app sources. Required.
	Sources *Sources
	// Renderer renders one source (the engine's cached toolkit). Required.
	Renderer render.Renderer
	// Project returns an app's project, whose sourceRepos bound where a
	// chart's dependencies may come from. Required.
	Project func(app *v1alpha1.Application) (*v1alpha1.AppProject, error)
	// Filter is the cache's resource filter: desired objects of kinds it
	// excludes are set apart (Desired.Excluded).
	Filter cache.ResourceFilter
	// RenderTimeout, when positive, bounds one render of one source.
	RenderTimeout time.Duration
	// TimeoutError makes the error of a render past RenderTimeout from the
	// app's name, the timeout and the renderer's error. Nil: an error
	// wrapping both the renderer's error and context.DeadlineExceeded.
	TimeoutError func(app string, timeout time.Duration, err error) error
}

// Builder builds an app's desired state: it resolves and snapshots every
// source, applies parameter override files and the build environment,
// renders through the renderer, resolves strategic-merge directives,
// settles each object's scope and sets apart the kinds the cache excludes.
// It is safe for concurrent use.
type Builder struct {
	cfg Config
	// directives resolves strategic-merge directives of rendered objects;
	// built once, its type trees are reused.
	directives *diff.DirectiveResolver
}

// NewBuilder returns the Builder of cfg.
func NewBuilder(cfg Config) *Builder {
	if cfg.TimeoutError == nil {
		cfg.TimeoutError = func(app string, timeout time.Duration, err error) error {
			return fmt.Errorf("application %s: render exceeded the render timeout of %s: %w (%w)", app, timeout, err, context.DeadlineExceeded)
		}
	}
	return &Builder{cfg: cfg, directives: diff.NewDirectiveResolver()}
}

// Destination is what a render needs of the app's destination cluster.
type Destination struct {
	// Server is the cluster's server URL, for the cache filter's
	// per-cluster rules.
	Server string
	// KubeVersion and APIVersions describe the cluster to the renderers
	// (Helm's .Capabilities).
	KubeVersion string
	APIVersions []string
	// Scope says whether the cluster serves a kind as namespaced; nil for
	// a destination not connected (offline).
	Scope func(schema.GroupKind) (namespaced, known bool)
}

// Request says which revisions Build renders.
type Request struct {
	// Pinned, with one entry per source, replaces each source's
	// targetRevision where the entry is not empty (a rollback, or a sync
	// of a chosen revision).
	Pinned []string
	// Resolved, with one entry per source, are the sources' revisions
	// already resolved; without them Build resolves each source itself.
	Resolved []source.Revision
	// Hard (a hard refresh) resolves every source again and renders past
	// the render cache.
	Hard bool
	// AsRendered returns the objects as the tools wrote them: no
	// namespace settled from the destination, and the kinds the cache
	// filter excludes kept among Objects (what a source hydrator commits).
	AsRendered bool
}

// Desired is an app's desired state at one revision.
type Desired struct {
	// Objects are the rendered objects, scopes settled.
	Objects []*unstructured.Unstructured
	// Revisions are the sources' revisions, in order.
	Revisions []source.Revision
	// Excluded are desired objects of kinds the cache filter excludes
	// (argocd-cm's resource.exclusions): never compared nor applied.
	Excluded []resource.Key
	// Tools are the tools that rendered the sources, in order (values-only
	// sources, which are not rendered, have none).
	Tools []render.Kind
}

// Revision returns the commit of a single-source app, or the commits of
// all sources joined by commas.
func (d Desired) Revision() string { return Revision(d.Revisions) }

// Revision writes the commits of revs (an app's sources, in order) as one
// string (JoinRevisions).
func Revision(revs []source.Revision) string {
	parts := make([]string, len(revs))
	for i, rev := range revs {
		parts[i] = rev.Commit
	}
	return JoinRevisions(parts)
}

// Build resolves, snapshots and renders every source of the app for dest.
//
// Multi-source rules (Argo CD's): every source is resolved and its
// revision reported, in order; a source with ref NAME exposes its whole
// tree to the others' helm.valueFiles as "$NAME/..." and is rendered
// itself only when it also has a path or a chart.
func (b *Builder) Build(ctx context.Context, app *v1alpha1.Application, dest Destination, req Request) (Desired, error) {
	srcs := app.Spec.AllSources()
	snaps := make([]source.Snapshot, len(srcs))
	defer func() {
		for _, snap := range snaps {
			if c, ok := snap.(source.Closer); ok {
				_ = c.Close()
			}
		}
	}()
	proj, err := b.cfg.Project(app)
	if err != nil {
		return Desired{}, err
	}
	var out Desired
	refs := map[string]source.Snapshot{}
	for i, src := range srcs {
		rev, snap, err := b.fetch(ctx, ProjectName(app), i, len(srcs), src, req)
		if err != nil {
			return Desired{}, err
		}
		snaps[i] = snap
		out.Revisions = append(out.Revisions, rev)
		if src.Ref != "" {
			if src.Chart != "" {
				return Desired{}, fmt.Errorf("source %d (%s): ref %q on a chart source: only a repository's files can be referenced", i, source.RedactURL(src.RepoURL), src.Ref)
			}
			if _, dup := refs["$"+src.Ref]; dup {
				return Desired{}, fmt.Errorf("source %d (%s): ref %q is used by two sources", i, source.RedactURL(src.RepoURL), src.Ref)
			}
			refs["$"+src.Ref] = snap
		}
	}
	for i, src := range srcs {
		if src.Ref != "" && src.Path == "" && src.Chart == "" {
			continue // values only
		}
		objs, tool, err := b.renderSource(ctx, app, proj, dest, i, src, snaps[i], refs, req.Hard)
		if err != nil {
			return Desired{}, err
		}
		out.Objects = append(out.Objects, objs...)
		if tool != "" {
			out.Tools = append(out.Tools, tool)
		}
	}
	if req.AsRendered {
		return out, nil
	}
	out.Objects = settleScopes(app, dest, out.Objects)
	out.Objects, out.Excluded = splitExcluded(b.cfg.Filter, app, dest, out.Objects)
	return out, nil
}

// fetch resolves source i of n of an app of project at its target (or its
// pinned revision) unless the request holds its revision, and opens its
// snapshot.
func (b *Builder) fetch(ctx context.Context, project string, i, n int, src v1alpha1.ApplicationSource, req Request) (source.Revision, source.Snapshot, error) {
	target := src.TargetRevision
	if len(req.Pinned) == n && req.Pinned[i] != "" {
		target = req.Pinned[i]
	}
	var known *source.Revision
	if len(req.Resolved) == n {
		known = &req.Resolved[i]
	} else if req.Hard {
		b.cfg.Sources.Invalidate(src.RepoURL)
	}
	return b.cfg.Sources.fetch(ctx, i, project, src, target, known)
}

// renderSource renders source i of app from its snapshot: ref mounts and
// value files, parameter overrides, render input and build environment,
// the render itself and its strategic-merge directives.
func (b *Builder) renderSource(ctx context.Context, app *v1alpha1.Application, proj *v1alpha1.AppProject, dest Destination, i int, src v1alpha1.ApplicationSource, snap source.Snapshot, refs map[string]source.Snapshot, fresh bool) ([]*unstructured.Unstructured, render.Kind, error) {
	rev := snap.Revision()
	if err := checkAppPath(app, i, src, snap, rev); err != nil {
		return nil, "", fmt.Errorf("source %d (%s): %w", i, SourceName(src), err)
	}
	env := buildEnv(app, src, rev, render.Input{KubeVersion: dest.KubeVersion, APIVersions: dest.APIVersions})
	fsys, src, err := withRefs(i, src, snap, refs, env)
	if err != nil {
		return nil, "", err
	}
	if src.Chart == "" {
		// Argo CD's parameter override files live beside the app's
		// path in a repository; a chart has none.
		if src, err = withParameterOverrides(app, src, fsys); err != nil {
			return nil, "", err
		}
	}
	in, err := renderInput(app, src, fsys, dest)
	if err != nil {
		return nil, "", err
	}
	if in.KubeVersion != env["KUBE_VERSION"] || strings.Join(in.APIVersions, ",") != env["KUBE_API_VERSIONS"] {
		// The source overrides the cluster's versions (helm.kubeVersion,
		// helm.apiVersions): the build environment says what it renders for.
		env = buildEnv(app, src, rev, in)
	}
	substituteBuildEnv(&in, env)
	tool, err := render.ToolFor(in)
	if err != nil {
		return nil, "", fmt.Errorf("source %d (%s): %w", i, SourceName(src), err)
	}
	if repos := dependencyRepos(proj); repos != nil {
		if in.Helm == nil {
			in.Helm = &render.HelmSource{}
		}
		in.Helm.DependencyRepos = repos
	}
	// The project picks the credentials of chart dependencies (through
	// the context, to the dependency fetcher) and, in the render cache
	// key, keeps apart renders of apps of different projects.
	in.Project = ProjectName(app)
	rctx, done := b.renderTimeout(withProject(ctx, in.Project), app.Name)
	objs, err := b.renderOne(rctx, in, fresh)
	if err = done(err); err != nil {
		// The renderer names the tool and the path; the revision
		// rendered is known only here.
		return nil, "", fmt.Errorf("source %d (%s) at %s: %w", i, SourceName(src), rev.Short(), err)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		// Strategic-merge directives are resolved here, once for
		// refresh and sync alike; one that cannot be is a
		// *diff.DirectiveError before anything is written.
		resolved, err := b.directives.Resolve(obj)
		if err != nil {
			return nil, "", err
		}
		out = append(out, resolved)
	}
	return out, tool, nil
}

// dependencyRepos returns the globs a chart's dependencies may come
// from: the project's sourceRepos, or nil when they admit any repository.
func dependencyRepos(p *v1alpha1.AppProject) []string {
	if p == nil || slices.Contains(p.Spec.SourceRepos, "*") {
		return nil
	}
	return append([]string{}, p.Spec.SourceRepos...)
}

// freshRenderer is a renderer with a cache that can be bypassed
// (render.CachedRenderer).
type freshRenderer interface {
	Refresh(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error)
}

// renderOne renders one source, past the render cache when fresh.
func (b *Builder) renderOne(ctx context.Context, in render.Input, fresh bool) ([]*unstructured.Unstructured, error) {
	if fr, ok := b.cfg.Renderer.(freshRenderer); ok && fresh {
		return fr.Refresh(ctx, in)
	}
	return b.cfg.Renderer.Render(ctx, in)
}
