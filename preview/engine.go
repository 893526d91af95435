package preview

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/render/jsonnet"
	"github.com/kubegitops/gitops/render/kustomize"
	"github.com/kubegitops/gitops/render/plain"
	"github.com/kubegitops/gitops/render/plugin"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/dir"
	"github.com/kubegitops/gitops/source/git"
)

// offlineServer is the destination every app is rendered for: renders use
// only the destination's namespace, and nothing connects.
const offlineServer = "https://preview.offline.invalid"

// counter counts the renders a tool actually ran (cache hits never reach
// it).
type counter struct {
	next  render.Renderer
	count *atomic.Int64
}

// Render implements render.Renderer.
func (c counter) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	c.count.Add(1)
	return c.next.Render(ctx, in)
}

// Identity implements render.Identifier, so the engine's cache keys (and
// the tree hashes they take, which the recorder sees) stay as they are.
func (c counter) Identity(in render.Input) (render.Identity, error) {
	id, ok := c.next.(render.Identifier)
	if !ok {
		return render.Identity{}, fmt.Errorf("%w: %T", render.ErrNotCacheable, c.next)
	}
	return id.Identity(in)
}

// lateFetcher lets the Helm renderer fetch dependencies through the
// engine, which exists only after its renderers.
type lateFetcher struct {
	mu sync.Mutex
	f  helm.DependencyFetcher
}

// FetchDependency implements helm.DependencyFetcher.
func (l *lateFetcher) FetchDependency(ctx context.Context, req helm.DependencyRequest) ([]byte, error) {
	l.mu.Lock()
	f := l.f
	l.mu.Unlock()
	if f == nil {
		return nil, fmt.Errorf("chart dependency %s: no fetcher", req.Name)
	}
	return f.FetchDependency(ctx, req)
}

// offlineEngine builds the engine that renders both sides: one offline
// destination, the previewed repository served by opts.Source through
// the read recorder, other repositories by the engine's defaults, and
// every tool counted.
func offlineEngine(opts Options, renders *atomic.Int64) (*gitops.Engine, error) {
	eo := gitops.DefaultOptions()
	eo.Log = opts.Log
	eo.Clusters = []gitops.ClusterConfig{{Name: "preview", Server: offlineServer, KubeVersion: opts.KubeVersion, APIVersions: opts.APIVersions}}
	eo.Projects = opts.Projects
	eo.Credentials = opts.Credentials
	eo.ChartSource = opts.ChartSource
	eo.RenderParallelism = opts.Parallelism
	fetch := &lateFetcher{}
	hopts := helm.DefaultOptions()
	hopts.Dependencies = fetch
	tools := map[render.Kind]render.Renderer{
		render.KindPlain:     plain.New(plain.DefaultOptions()),
		render.KindKustomize: kustomize.New(kustomize.DefaultOptions()),
		render.KindHelm:      helm.New(hopts),
		render.KindJsonnet:   jsonnet.New(jsonnet.DefaultOptions()),
		render.KindPlugin:    plugin.New(plugin.DefaultOptions()),
	}
	for k, r := range opts.Renderers {
		tools[k] = r
	}
	eo.Renderers = map[render.Kind]render.Renderer{}
	for k, r := range tools {
		eo.Renderers[k] = counter{next: r, count: renders}
	}
	others := &defaultSources{}
	eo.SourceFor = func(repoURL string) (source.Source, error) {
		var s source.Source
		if sameRepo(repoURL, opts.RepoURL) {
			s = repoSource{Source: opts.Source, repo: opts.Repository}
		} else {
			var err error
			if s, err = others.get(repoURL); err != nil {
				return nil, err
			}
		}
		return recordingSource{Source: s, previewed: func(u string) bool { return sameRepo(u, opts.RepoURL) }}, nil
	}
	e, err := gitops.New(eo)
	if err != nil {
		return nil, err
	}
	fetch.mu.Lock()
	fetch.f = e.Sources().ChartDependencies()
	fetch.mu.Unlock()
	return e, nil
}

// repoSource reads the previewed repository from where the preview was
// told it is (a Git server URL or a local clone), whatever URL the apps
// name it by.
type repoSource struct {
	source.Source
	repo source.Repository
}

// Resolve implements source.Source.
func (r repoSource) Resolve(ctx context.Context, _ source.Repository, revision string) (source.Revision, error) {
	return r.Source.Resolve(ctx, r.repo, revision)
}

// Snapshot implements source.Source.
func (r repoSource) Snapshot(ctx context.Context, _ source.Repository, rev source.Revision) (source.Snapshot, error) {
	return r.Source.Snapshot(ctx, r.repo, rev)
}

// defaultSources are the engine's default sources for the repositories
// other than the previewed one: folders from source/dir, the rest from
// source/git.
type defaultSources struct {
	mu       sync.Mutex
	git, dir source.Source
}

func (d *defaultSources) get(repoURL string) (source.Source, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if isLocalPath(repoURL) {
		if d.dir == nil {
			d.dir = dir.New(dir.DefaultOptions())
		}
		return d.dir, nil
	}
	if d.git == nil {
		g, err := git.New(git.DefaultOptions())
		if err != nil {
			return nil, err
		}
		d.git = g
	}
	return d.git, nil
}

func isLocalPath(u string) bool {
	return len(u) > 0 && (u[0] == '/' || len(u) > 7 && u[:7] == "file://")
}
