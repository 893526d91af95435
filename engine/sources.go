package engine

import (
	"context"
	"errors"
	"fmt"
	pathpkg "path"
	"slices"
	"strings"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/plain"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/dir"
	"github.com/kubegitops/gitops/source/git"
	"github.com/kubegitops/gitops/source/helmrepo"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func (e *Engine) newRenderer() (render.Renderer, error) {
	tools := render.Tools{render.KindPlain: plain.New(plain.DefaultOptions())}
	if e.opts.Toolkit != nil {
		for k, r := range e.opts.Toolkit(dependencyFetcher{e}) {
			tools[k] = r
		}
	}
	for k, r := range e.opts.Renderers {
		if !render.KnownKind(k) {
			// Sources are matched to tools by their spec (helm, kustomize,
			// directory, plugin) and their files; a new kind would never be
			// picked, so refuse it rather than ignore it.
			return nil, fmt.Errorf("gitops: Options.Renderers: unknown tool %q: a new kind of source is rendered through the plugin tool (render.KindPlugin, chosen by spec.source.plugin)", k)
		}
		tools[k] = r
	}
	st := e.opts.RenderStore
	if st == nil {
		st = store.NewMemory(store.DefaultMemoryOptions())
	}
	copts := render.DefaultCacheOptions()
	copts.Registerer = e.opts.Registerer
	if e.opts.RenderParallelism > 0 {
		copts.MaxConcurrent = e.opts.RenderParallelism
	}
	copts.Logger = e.opts.Log
	var next render.Renderer = tools
	if e.opts.Decryptor != nil {
		next = render.Decrypting(tools, e.opts.Decryptor)
	}
	return render.Cached(next, st, copts), nil
}

// sourceFor returns the Source of a repository URL, one per kind of source
// for the engine's life (so Git object stores and resolve caches are shared).
func (e *Engine) sourceFor(repoURL string) (source.Source, error) {
	if e.opts.SourceFor != nil {
		return e.opts.SourceFor(repoURL)
	}
	kind := "git"
	if strings.HasPrefix(repoURL, "file://") || strings.HasPrefix(repoURL, "/") {
		kind = "dir"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.sources[kind]; ok {
		return s, nil
	}
	var s source.Source
	if kind == "dir" {
		s = dir.New(dir.DefaultOptions())
	} else {
		gopts := git.DefaultOptions()
		gopts.Registerer = e.opts.Registerer
		gopts.Logger = e.opts.Log
		gopts.ResolveTTL = e.opts.RefCacheTTL
		g, err := git.New(gopts)
		if err != nil {
			return nil, err
		}
		s = g
	}
	e.sources[kind] = s
	return s, nil
}

// rendered is an app's desired state at one revision.
type rendered struct {
	objects   []*unstructured.Unstructured
	revisions []source.Revision
	// excluded are desired objects of kinds the cache filter excludes
	// (argocd-cm's resource.exclusions): never compared nor applied.
	excluded []resource.Key
}

// Revision returns the commit of a single-source app, or the commits of all
// sources joined by commas.
func (r rendered) Revision() string {
	parts := make([]string, len(r.revisions))
	for i, rev := range r.revisions {
		parts[i] = rev.Commit
	}
	return joinRevisions(parts)
}

// joinRevisions writes the revisions of an app's sources as one string.
func joinRevisions(revs []string) string { return strings.Join(revs, ",") }

// render resolves, snapshots and renders every source of the app. pinned,
// when set, replaces each source's targetRevision (a rollback, or a sync of
// a chosen revision).
//
// Multi-source rules (Argo CD's): every source is resolved and its
// revision reported, in order; a source with ref NAME exposes its whole
// tree to the others' helm.valueFiles as "$NAME/..." and is rendered
// itself only when it also has a path or a chart.
//
// fresh (a hard refresh) resolves every source again and renders past the
// render cache.
func (e *Engine) render(ctx context.Context, app *Application, cs *clusterState, pinned []string, fresh bool) (rendered, error) {
	return e.renderResolved(ctx, app, cs, pinned, nil, fresh)
}

// renderResolved is render with every source's revision already resolved
// (resolved, one per source, as resolveSources returned them), or resolving
// them itself when resolved is nil.
func (e *Engine) renderResolved(ctx context.Context, app *Application, cs *clusterState, pinned []string, resolved []source.Revision, fresh bool) (rendered, error) {
	var out rendered
	srcs := app.Spec.AllSources()
	snaps := make([]source.Snapshot, len(srcs))
	defer func() {
		for _, snap := range snaps {
			if c, ok := snap.(source.Closer); ok {
				_ = c.Close()
			}
		}
	}()
	refs := map[string]source.Snapshot{}
	proj, err := e.project(app)
	if err != nil {
		return rendered{}, err
	}
	for i, src := range srcs {
		target := src.TargetRevision
		if len(pinned) == len(srcs) && pinned[i] != "" {
			target = pinned[i]
		}
		var known *source.Revision
		if len(resolved) == len(srcs) {
			known = &resolved[i]
		} else if fresh {
			e.Invalidate(src.RepoURL)
		}
		rev, snap, err := e.fetch(ctx, i, src, target, known)
		if err != nil {
			return rendered{}, err
		}
		snaps[i] = snap
		out.revisions = append(out.revisions, rev)
		if src.Ref != "" {
			if src.Chart != "" {
				return rendered{}, fmt.Errorf("source %d (%s): ref %q on a chart source: only a repository's files can be referenced", i, source.RedactURL(src.RepoURL), src.Ref)
			}
			if _, dup := refs["$"+src.Ref]; dup {
				return rendered{}, fmt.Errorf("source %d (%s): ref %q is used by two sources", i, source.RedactURL(src.RepoURL), src.Ref)
			}
			refs["$"+src.Ref] = snap
		}
	}
	for i, src := range srcs {
		if src.Ref != "" && src.Path == "" && src.Chart == "" {
			continue // values only
		}
		env := buildEnv(app, src, snaps[i].Revision(), renderVersions(cs))
		snap, src, err := withRefs(i, src, snaps[i], refs, env)
		if err != nil {
			return rendered{}, err
		}
		if src.Chart == "" {
			// Argo CD's parameter override files live beside the app's
			// path in a repository; a chart has none.
			if src, err = withParameterOverrides(app, src, snap); err != nil {
				return rendered{}, err
			}
		}
		in, err := renderInput(app, src, snap, cs)
		if err != nil {
			return rendered{}, err
		}
		if in.KubeVersion != env["KUBE_VERSION"] || strings.Join(in.APIVersions, ",") != env["KUBE_API_VERSIONS"] {
			// The source overrides the cluster's versions (helm.kubeVersion,
			// helm.apiVersions): the build environment says what it renders for.
			env = buildEnv(app, src, snaps[i].Revision(), in)
		}
		substituteBuildEnv(&in, env)
		if repos := dependencyRepos(proj); repos != nil {
			if in.Helm == nil {
				in.Helm = &render.HelmSource{}
			}
			in.Helm.DependencyRepos = repos
		}
		rctx, done := e.renderTimeout(ctx, app.Name)
		objs, err := e.renderOne(rctx, in, fresh)
		if err = done(err); err != nil {
			// The renderer names the tool and the path; the revision
			// rendered is known only here.
			return rendered{}, fmt.Errorf("source %d (%s) at %s: %w", i, sourceName(src), snaps[i].Revision().Short(), err)
		}
		for _, obj := range objs {
			// Strategic-merge directives are resolved here, once for
			// refresh and sync alike; one that cannot be is a
			// *diff.DirectiveError before anything is written.
			resolved, err := e.directives.Resolve(obj)
			if err != nil {
				return rendered{}, err
			}
			out.objects = append(out.objects, resolved)
		}
	}
	out.objects = e.settleScopes(app, cs, out.objects)
	out.objects, out.excluded = e.splitExcluded(app, cs, out.objects)
	return out, nil
}

// dependencyRepos returns the globs a chart's dependencies may come
// from: the project's sourceRepos, or nil when they admit any repository.
func dependencyRepos(p *Project) []string {
	if p == nil || slices.Contains(p.Spec.SourceRepos, "*") {
		return nil
	}
	return append([]string{}, p.Spec.SourceRepos...)
}

// sourceOf returns the Source and Repository of one app source: the
// chart source for a chart, else the source of its repository URL.
func (e *Engine) sourceOf(src ApplicationSource) (source.Source, source.Repository, error) {
	if src.Helm != nil && src.Helm.PassCredentials {
		return nil, source.Repository{}, fmt.Errorf("%s: helm.passCredentials is not supported: a repository's credentials are only sent to its own host", source.RedactURL(src.RepoURL))
	}
	repo := source.Repository{URL: src.RepoURL, Chart: src.Chart}
	if e.opts.Credentials != nil {
		repo.Credentials = e.opts.Credentials(src.RepoURL)
	}
	var s source.Source
	var err error
	if src.Chart != "" {
		s, err = e.chartSource()
	} else {
		s, err = e.sourceFor(src.RepoURL)
	}
	return s, repo, err
}

// resolve resolves one app source at target.
func (e *Engine) resolve(ctx context.Context, src ApplicationSource, target string) (source.Revision, error) {
	s, repo, err := e.sourceOf(src)
	if err != nil {
		return source.Revision{}, err
	}
	return s.Resolve(ctx, repo, target)
}

// fetch resolves one source at target (unless known holds its revision
// already) and opens its snapshot.
func (e *Engine) fetch(ctx context.Context, i int, src ApplicationSource, target string, known *source.Revision) (source.Revision, source.Snapshot, error) {
	s, repo, err := e.sourceOf(src)
	if err != nil {
		return source.Revision{}, nil, err
	}
	name := sourceName(src)
	var rev source.Revision
	if known != nil {
		rev = *known
	} else if rev, err = e.resolveOne(ctx, i, s, repo, src, target); err != nil {
		return source.Revision{}, nil, err
	}
	snap, err := s.Snapshot(ctx, repo, rev)
	e.metrics.SourceRequest(src.RepoURL, "fetch", err)
	if err != nil {
		return source.Revision{}, nil, fmt.Errorf("source %d: snapshot %s at %s: %w", i, name, rev.Commit, err)
	}
	return rev, snap, nil
}

// resolveOne resolves one source of an app at target, counted as a Git
// request.
func (e *Engine) resolveOne(ctx context.Context, i int, s source.Source, repo source.Repository, src ApplicationSource, target string) (source.Revision, error) {
	rev, err := s.Resolve(ctx, repo, target)
	e.metrics.SourceRequest(src.RepoURL, "resolve", err)
	if err != nil {
		var named *source.Error
		if errors.As(err, &named) && named.Repository != "" {
			// It names the repository, the operation and the revision:
			// saying them again only lengthens the message.
			return source.Revision{}, fmt.Errorf("source %d: %w", i, err)
		}
		return source.Revision{}, fmt.Errorf("source %d: resolve %s at %q: %w", i, sourceName(src), target, err)
	}
	return rev, nil
}

// resolveSources resolves every source of app at its targetRevision, as
// render would: a hard refresh (fresh) drops each repository's resolve
// cache first.
func (e *Engine) resolveSources(ctx context.Context, app *Application, fresh bool) ([]source.Revision, error) {
	srcs := app.Spec.AllSources()
	revs := make([]source.Revision, len(srcs))
	for i, src := range srcs {
		s, repo, err := e.sourceOf(src)
		if err != nil {
			return nil, err
		}
		if fresh {
			e.Invalidate(src.RepoURL)
		}
		if revs[i], err = e.resolveOne(ctx, i, s, repo, src, src.TargetRevision); err != nil {
			return nil, err
		}
	}
	return revs, nil
}

// sourceName names a source in errors, without credentials.
func sourceName(src ApplicationSource) string {
	name := source.RedactURL(src.RepoURL)
	if src.Chart != "" {
		name += " chart " + src.Chart
	}
	return name
}

// chartSource returns the Source of chart sources: Options.ChartSource,
// or one helmrepo.Source with its defaults for the engine's life.
func (e *Engine) chartSource() (source.Source, error) {
	if e.opts.ChartSource != nil {
		return e.opts.ChartSource, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.sources["helm"]; ok {
		return s, nil
	}
	hopts := helmrepo.DefaultOptions()
	hopts.Logger = e.opts.Log
	s, err := helmrepo.New(hopts)
	if err != nil {
		return nil, err
	}
	e.sources["helm"] = s
	return s, nil
}

// withRefs mounts the trees of ref sources into snap for the value files
// of src that name them ("$values/envs/prod.yaml": the file envs/prod.yaml
// at the root of the source with ref values), and rewrites those value
// files to reach the mount from the chart's directory. A "$NAME" that no
// source defines, or a path that climbs out of the referenced tree, is an
// error naming the value file.
//
// The build environment is substituted in value file paths as Argo CD
// does: in a "$NAME/" path after the reference is resolved, in the others
// whole. A "$NAME/" that is neither a ref nor a build variable is an error
// naming the value file.
func withRefs(i int, src ApplicationSource, snap source.Snapshot, refs map[string]source.Snapshot, env map[string]string) (source.Snapshot, ApplicationSource, error) {
	if src.Helm == nil || len(src.Helm.ValueFiles) == 0 {
		return snap, src, nil
	}
	var mounts map[string]source.Snapshot
	files := make([]string, len(src.Helm.ValueFiles))
	up := upTo(src.Path)
	for j, vf := range src.Helm.ValueFiles {
		name, rest, _ := strings.Cut(vf, "/")
		ref, isRef := refs[name]
		if !isRef {
			if _, isVar := env[strings.Trim(strings.TrimPrefix(name, "$"), "{}")]; strings.HasPrefix(vf, "$") && !isVar && !strings.HasPrefix(vf, "$$") {
				return nil, src, fmt.Errorf("source %d: helm.valueFiles %q: no source has ref %q", i, vf, strings.TrimPrefix(name, "$"))
			}
			files[j] = envsubst(vf, env)
			continue
		}
		rest = envsubst(rest, env)
		clean := pathpkg.Clean("/" + rest)
		if rest == "" || clean == "/" || strings.Contains("/"+rest+"/", "/../") {
			return nil, src, fmt.Errorf("source %d: helm.valueFiles %q: %w", i, vf, render.ErrOutsideRoot)
		}
		if mounts == nil {
			mounts = map[string]source.Snapshot{}
		}
		mounts[name] = ref
		files[j] = up + name + clean
	}
	h := *src.Helm
	h.ValueFiles = files
	src.Helm = &h
	if mounts == nil {
		return snap, src, nil
	}
	return source.WithMounts(snap, mounts), src, nil
}

// upTo returns the "../" steps from a source's path to its tree's root.
func upTo(p string) string {
	p = strings.Trim(pathpkg.Clean("/"+p), "/")
	if p == "" {
		return ""
	}
	return strings.Repeat("../", strings.Count(p, "/")+1)
}

// Render returns the app's desired objects as its sources render them now
// (resolved, snapshotted and rendered through the engine's render cache,
// with the destination cluster's version and API versions), and the
// revision they came from. Child Applications are included. For an
// offline destination (ClusterConfig.Config nil) nothing connects to a
// cluster: the versions come from its ClusterConfig.
func (e *Engine) Render(ctx context.Context, app *Application) ([]*unstructured.Unstructured, string, error) {
	cs, err := e.destination(app.Spec.Destination)
	if err != nil {
		return nil, "", err
	}
	if cs.Config().Config != nil {
		if cs, err = e.cluster(ctx, app.Spec.Destination); err != nil {
			return nil, "", err
		}
	}
	r, err := e.render(ctx, app, cs, nil, false)
	if err != nil {
		return nil, "", err
	}
	return r.objects, r.Revision(), nil
}

// freshRenderer is a renderer with a cache that can be bypassed
// (render.CachedRenderer).
type freshRenderer interface {
	Refresh(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error)
}

// renderOne renders one source, past the render cache when fresh.
func (e *Engine) renderOne(ctx context.Context, in render.Input, fresh bool) ([]*unstructured.Unstructured, error) {
	if fr, ok := e.renderer.(freshRenderer); ok && fresh {
		return fr.Refresh(ctx, in)
	}
	return e.renderer.Render(ctx, in)
}
