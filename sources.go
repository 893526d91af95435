package gitops

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/kubegitops/gitops/resource"
	"sort"
	"strings"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/render/jsonnet"
	"github.com/kubegitops/gitops/render/kustomize"
	"github.com/kubegitops/gitops/render/plain"
	"github.com/kubegitops/gitops/render/plugin"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/dir"
	"github.com/kubegitops/gitops/source/git"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func (e *Engine) newRenderer() (render.Renderer, error) {
	tools := render.Tools{
		render.KindPlain:     plain.New(plain.DefaultOptions()),
		render.KindKustomize: kustomize.New(kustomize.DefaultOptions()),
		render.KindHelm:      helm.New(helm.DefaultOptions()),
		render.KindJsonnet:   jsonnet.New(jsonnet.DefaultOptions()),
		render.KindPlugin:    plugin.New(plugin.DefaultOptions()),
	}
	for k, r := range e.opts.Renderers {
		if _, known := tools[k]; !known {
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
	return render.Cached(tools, st, copts), nil
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
func (e *Engine) render(ctx context.Context, app *Application, cs *clusterState, pinned []string) (rendered, error) {
	var out rendered
	srcs := app.Spec.AllSources()
	for i, src := range srcs {
		if src.Ref != "" || src.Chart != "" {
			return rendered{}, fmt.Errorf("source %d (%s): ref and chart sources are not supported yet", i, source.RedactURL(src.RepoURL))
		}
		s, err := e.sourceFor(src.RepoURL)
		if err != nil {
			return rendered{}, err
		}
		repo := source.Repository{URL: src.RepoURL}
		if e.opts.Credentials != nil {
			repo.Credentials = e.opts.Credentials(src.RepoURL)
		}
		target := src.TargetRevision
		if len(pinned) == len(srcs) && pinned[i] != "" {
			target = pinned[i]
		}
		rev, err := s.Resolve(ctx, repo, target)
		e.metrics.gitRequest("resolve", err)
		e.metrics.argo.gitRequest(src.RepoURL, "resolve")
		if err != nil {
			return rendered{}, fmt.Errorf("resolve %s at %q: %w", source.RedactURL(src.RepoURL), target, err)
		}
		snap, err := s.Snapshot(ctx, repo, rev)
		e.metrics.gitRequest("fetch", err)
		e.metrics.argo.gitRequest(src.RepoURL, "fetch")
		if err != nil {
			return rendered{}, fmt.Errorf("snapshot %s at %s: %w", source.RedactURL(src.RepoURL), rev.Commit, err)
		}
		src, err := withParameterOverrides(app, src, snap)
		if err != nil {
			return rendered{}, err
		}
		in, err := renderInput(app, src, snap, cs)
		if err != nil {
			return rendered{}, err
		}
		objs, err := e.renderer.Render(ctx, in)
		if c, ok := snap.(interface{ Close() error }); ok {
			_ = c.Close()
		}
		if err != nil {
			return rendered{}, err
		}
		out.objects = append(out.objects, objs...)
		out.revisions = append(out.revisions, rev)
	}
	out.objects, out.excluded = e.splitExcluded(app, cs, out.objects)
	return out, nil
}

// isAbsolutePath reports an app path that names a place from the root of a
// file system (/x, or a Windows drive or UNC path) instead of one inside
// the repository.
func isAbsolutePath(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\\`) ||
		(len(p) >= 3 && p[1] == ':' && (p[2] == '/' || p[2] == '\\'))
}

// renderInput maps an Argo CD source onto the renderer's input, with the
// target cluster's version and API versions.
func renderInput(app *Application, src ApplicationSource, snap source.Snapshot, cs *clusterState) (render.Input, error) {
	if isAbsolutePath(src.Path) {
		// Argo CD refuses an absolute app path rather than reading it from
		// the repository root.
		return render.Input{}, &render.PathError{Op: "resolve", Path: src.Path, Err: render.ErrAbsolutePath}
	}
	path := strings.TrimRight(src.Path, "/")
	if path == "" {
		path = "."
	}
	in := render.Input{FS: snap, Path: path, AppName: app.Name, Namespace: app.Spec.Destination.Namespace}
	switch {
	case cs != nil && cs.cache != nil:
		in.KubeVersion = cs.cache.ServerVersion()
		in.APIVersions = apiVersions(cs)
	case cs != nil:
		in.KubeVersion, in.APIVersions = cs.cfg.KubeVersion, cs.cfg.APIVersions
	}
	if d := src.Directory; d != nil {
		in.Directory = &render.DirectorySource{Recurse: d.Recurse, Include: d.Include, Exclude: d.Exclude}
		if len(d.Jsonnet.ExtVars)+len(d.Jsonnet.TLAs)+len(d.Jsonnet.Libs) > 0 {
			in.Jsonnet = &render.JsonnetSource{ExtVars: jsonnetVars(d.Jsonnet.ExtVars), TLAs: jsonnetVars(d.Jsonnet.TLAs), Libs: d.Jsonnet.Libs}
		}
	}
	if h := src.Helm; h != nil {
		hs := &render.HelmSource{ReleaseName: h.ReleaseName, ValueFiles: h.ValueFiles, IgnoreMissingValueFiles: h.IgnoreMissingValueFiles,
			Values: h.Values, SkipCRDs: h.SkipCrds, SkipTests: h.SkipTests, SkipSchemaValidation: h.SkipSchemaValidation}
		for _, p := range h.Parameters {
			hs.Parameters = append(hs.Parameters, render.HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
		for _, p := range h.FileParameters {
			hs.FileParameters = append(hs.FileParameters, render.HelmFileParameter{Name: p.Name, Path: p.Path})
		}
		if h.ValuesObject != nil && len(h.ValuesObject.Raw) > 0 {
			if err := json.Unmarshal(h.ValuesObject.Raw, &hs.ValuesObject); err != nil {
				return render.Input{}, fmt.Errorf("helm.valuesObject: %w", err)
			}
		}
		if h.Namespace != "" {
			in.Namespace = h.Namespace
		}
		if h.KubeVersion != "" {
			in.KubeVersion = h.KubeVersion
		}
		if len(h.APIVersions) > 0 {
			in.APIVersions = h.APIVersions
		}
		in.Helm = hs
	}
	if k := src.Kustomize; k != nil {
		ks := &render.KustomizeSource{NamePrefix: k.NamePrefix, NameSuffix: k.NameSuffix, Images: k.Images,
			CommonLabels: k.CommonLabels, CommonAnnotations: k.CommonAnnotations, Namespace: k.Namespace, Components: k.Components}
		for _, r := range k.Replicas {
			ks.Replicas = append(ks.Replicas, render.KustomizeReplica{Name: r.Name, Count: int64(r.Count.IntValue())})
		}
		for _, p := range k.Patches {
			kp := render.KustomizePatch{Path: p.Path, Patch: p.Patch}
			if t := p.Target; t != nil {
				kp.Target = &render.KustomizeSelector{Group: t.Group, Version: t.Version, Kind: t.Kind, Name: t.Name,
					Namespace: t.Namespace, LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector}
			}
			ks.Patches = append(ks.Patches, kp)
		}
		if k.KubeVersion != "" {
			in.KubeVersion = k.KubeVersion
		}
		in.Kustomize = ks
	}
	if p := src.Plugin; p != nil {
		ps := &render.PluginSource{Name: p.Name, Env: map[string]string{}}
		for _, e := range p.Env {
			ps.Env[e.Name] = e.Value
		}
		in.Plugin = ps
	}
	return in, nil
}

func jsonnetVars(vs []JsonnetVar) []render.JsonnetVar {
	out := make([]render.JsonnetVar, len(vs))
	for i, v := range vs {
		out[i] = render.JsonnetVar{Name: v.Name, Value: v.Value, Code: v.Code}
	}
	return out
}

// apiVersions lists "group/version" and "group/version/Kind" for every
// resource the cluster serves, as Helm's .Capabilities.APIVersions wants.
func apiVersions(cs *clusterState) []string {
	set := map[string]bool{}
	for _, l := range cs.cache.APIResources() {
		set[l.GroupVersion] = true
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				set[l.GroupVersion+"/"+r.Kind] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
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
	if cs.cfg.Config != nil {
		if cs, err = e.cluster(ctx, app.Spec.Destination); err != nil {
			return nil, "", err
		}
	}
	r, err := e.render(ctx, app, cs, nil)
	if err != nil {
		return nil, "", err
	}
	return r.objects, r.Revision(), nil
}
