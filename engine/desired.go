package engine

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/engine/internal/compare"
	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/plain"
	"github.com/kubegitops/gitops/source"
)

// ErrNoChartSource is wrapped by the error of an app's chart source (or a
// chart's dependency) read by an engine with neither Options.ChartSource
// nor Options.NewChartSource; the error names the source and the options
// that plug one in.
var ErrNoChartSource = desired.ErrNoChartSource

// ErrNoOCISource is wrapped by the error of an app's OCI artifact source
// (an oci:// repoURL without a chart) read by an engine without
// Options.NewOCISource; the error names the source and the option.
var ErrNoOCISource = desired.ErrNoOCISource

// AppPathError is the error of a refresh or sync whose source path
// (spec.source.path, spec.sources[i].path) leaves the repository, does
// not exist at the revision fetched, or names a file: it names the field,
// the path and the revision, as Argo CD's "app path outside root" and
// "app path does not exist" do.
type AppPathError = desired.AppPathError

// newDesired builds the engine's desired-state part (engine/internal/desired)
// from its options: the sources, and the render cache over the swappable
// tools of the toolkit (liveTools); the Builder over both is a live part
// (buildParts).
func (e *Engine) newDesired() error {
	opts := e.opts
	e.sources = desired.NewSources(desired.SourcesConfig{
		SourceFor: opts.SourceFor, ChartSource: opts.ChartSource, NewChartSource: opts.NewChartSource,
		NewOCISource: opts.NewOCISource,
		Credentials:  appCredentials(opts),
		RefCacheTTL:  opts.RefCacheTTL, Registerer: opts.Registerer, Log: opts.Log,
		GitRequest: func(repoURL, op string, err error) {
			e.metrics.SourceRequest(repoURL, op, err)
		},
	})
	tools, err := newTools(opts, e.sources.Dependencies())
	if err != nil {
		return err
	}
	e.tools = &liveTools{}
	e.tools.set(tools)
	e.renderer = newRenderer(opts, e.tools)
	return nil
}

// newTools builds the renderers of opts: the plain renderer, the Toolkit's
// tools (given deps, the fetcher of chart dependencies) and
// Options.Renderers.
func newTools(opts Options, deps render.DependencyFetcher) (render.Tools, error) {
	tools := render.Tools{render.KindPlain: plain.New(plain.DefaultOptions())}
	if opts.Toolkit != nil {
		for k, r := range opts.Toolkit(deps) {
			tools[k] = r
		}
	}
	for k, r := range opts.Renderers {
		if !render.KnownKind(k) {
			// Sources are matched to tools by their spec (helm, kustomize,
			// directory, plugin) and their files; a new kind would never be
			// picked, so refuse it rather than ignore it.
			return nil, fmt.Errorf("gitops: Options.Renderers: unknown tool %q: a new kind of source is rendered through the plugin tool (render.KindPlugin, chosen by spec.source.plugin)", k)
		}
		tools[k] = r
	}
	return tools, nil
}

// newRenderer builds the renderer of opts over tools: decrypting with
// Options.Decryptor and cached in Options.RenderStore.
func newRenderer(opts Options, tools render.Renderer) render.Renderer {
	st := opts.RenderStore
	if st == nil {
		st = store.NewMemory(store.DefaultMemoryOptions())
	}
	copts := render.DefaultCacheOptions()
	copts.Registerer = opts.Registerer
	if opts.RenderParallelism > 0 {
		copts.MaxConcurrent = opts.RenderParallelism
	}
	copts.Logger = opts.Log
	next := tools
	if opts.Decryptor != nil {
		next = render.Decrypting(tools, opts.Decryptor)
	}
	return render.Cached(next, st, copts)
}

// newComparer builds the engine's comparison part (engine/internal/compare)
// from its options and health checker; forkDiffers says the engine builds
// its own Differs (Options.NewDiffer was not set).
func newComparer(opts Options, checker health.Checker, forkDiffers bool) *compare.Comparer {
	cfg := compare.Config{
		Tracking: opts.Tracking, Health: checker, Policies: opts.Policies,
		ApplyChildApplications: opts.ApplyChildApplications,
		KnownTypeFields:        opts.KnownTypeFields, IgnoreAggregatedRoles: opts.IgnoreAggregatedRoles,
		CompareAllStatus: opts.CompareStatus == CompareStatusAll, IgnoreStatus: opts.IgnoreStatus,
		IgnoreDifferences: opts.IgnoreDifferences, FieldManager: opts.Sync.FieldManager,
		ClientSideApply: opts.Sync.ClientSideApply, ServerSideDiff: opts.ServerSideDiff, ForceConflicts: opts.Sync.ForceConflicts,
		JQTimeout: opts.JQTimeout,
	}
	if !forkDiffers {
		newDiffer := opts.NewDiffer
		cfg.NewDiffer = func(o diff.Options) (compare.Differ, error) { return newDiffer(o) }
	}
	return compare.New(cfg)
}

// render builds the app's desired state for the destination cs. pinned,
// when set, replaces each source's targetRevision (a rollback, or a sync
// of a chosen revision); fresh (a hard refresh) resolves every source
// again and renders past the render cache.
func (e *Engine) render(ctx context.Context, app *Application, cs *clusterState, pinned []string, fresh bool) (desired.Desired, error) {
	return e.parts().desired.Build(ctx, app, desiredView(cs), desired.Request{Pinned: pinned, Hard: fresh})
}

// sourceFor returns the Source of a repository URL (desired.Sources.For).
func (e *Engine) sourceFor(repoURL string) (source.Source, error) { return e.sources.For(repoURL) }

// Render returns the app's desired objects as its sources render them now
// (resolved, snapshotted and rendered through the engine's render cache,
// with the destination cluster's version and API versions), and the
// revision they came from. Child Applications are included. For an
// offline destination (ClusterConfig.Config nil) nothing connects to a
// cluster: the versions come from its ClusterConfig.
func (ops Ops) Render(ctx context.Context, app *Application) ([]*unstructured.Unstructured, string, error) {
	e := ops.e

	r, err := e.renderNow(ctx, app)
	if err != nil {
		return nil, "", err
	}
	return r.Objects, r.Revision(), nil
}

// RenderedManifests are an app's objects as its tools wrote them
// (Engine.RenderManifests).
type RenderedManifests struct {
	// Objects are the rendered objects, in the order the tools wrote them.
	Objects []*unstructured.Unstructured
	// Revision is the commit (or chart version) rendered; the commits of
	// every source joined by commas for a multi-source app.
	Revision string
	// Tools are the tools that rendered the sources, in order
	// (render.KindHelm, ...).
	Tools []string
}

// RenderManifests renders the app as Render does (resolved, snapshotted
// and rendered through the engine's render cache, with the destination's
// versions, offline for an offline destination) and returns the objects
// as the tools wrote them: no namespace is set from the destination and
// no kind is set apart by the cache's resource filter, as Argo CD's repo
// server hands its manifests to the source hydrator. revision, when set,
// replaces the targetRevision of a single-source app (a commit resolved
// earlier, so that several apps render one commit).
func (ops Ops) RenderManifests(ctx context.Context, app *Application, revision string) (RenderedManifests, error) {
	e := ops.e

	var pinned []string
	if revision != "" {
		if n := len(app.Spec.AllSources()); n != 1 {
			return RenderedManifests{}, fmt.Errorf("application %s: a revision pins a single source, the app has %d", app.Name, n)
		}
		pinned = []string{revision}
	}
	cs, err := e.renderDestination(ctx, app)
	if err != nil {
		return RenderedManifests{}, err
	}
	d, err := e.parts().desired.Build(ctx, app, desiredView(cs), desired.Request{Pinned: pinned, AsRendered: true})
	if err != nil {
		return RenderedManifests{}, err
	}
	out := RenderedManifests{Objects: d.Objects, Revision: d.Revision()}
	for _, t := range d.Tools {
		out.Tools = append(out.Tools, string(t))
	}
	return out, nil
}

// renderNow is Render's render: on the destination's cluster, or offline.
func (e *Engine) renderNow(ctx context.Context, app *Application) (desired.Desired, error) {
	cs, err := e.renderDestination(ctx, app)
	if err != nil {
		return desired.Desired{}, err
	}
	return e.render(ctx, app, cs, nil, false)
}

// renderDestination is the destination a one-off render of app uses: its
// cluster, connected, or the offline destination as configured.
func (e *Engine) renderDestination(ctx context.Context, app *Application) (*clusterState, error) {
	cs, err := e.destination(app.Spec.Destination)
	if err != nil {
		return nil, err
	}
	if cs.Config().Config != nil {
		if cs, err = e.cluster(ctx, app.Spec.Destination); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// ChartDependencies returns the fetcher the engine's own Helm renderer
// uses for dependencies missing from a chart's charts/ (through the
// engine's chart source and credentials, under HelmSource.DependencyRepos).
// A host that replaces the Helm renderer through Options.Renderers sets it
// as its helm.Options.Dependencies (render/helm) to keep that behaviour.
func (srcs Sources) ChartDependencies() render.DependencyFetcher {
	e := srcs.e
	return e.sources.Dependencies()
}

// RenderTimeoutError reports a render of one source of an app that ran
// past Options.RenderTimeout (Argo CD's
// controller.repo.server.timeout.seconds). It wraps
// context.DeadlineExceeded.
type RenderTimeoutError struct {
	// App is the application's name.
	App string
	// Timeout is Options.RenderTimeout.
	Timeout time.Duration
	// Err is the renderer's error.
	Err error
}

// Error names the app and the timeout.
func (e *RenderTimeoutError) Error() string {
	return fmt.Sprintf("application %s: render exceeded the render timeout of %s: %v", e.App, e.Timeout, e.Err)
}

// Unwrap returns the renderer's error and context.DeadlineExceeded.
func (e *RenderTimeoutError) Unwrap() []error { return []error{e.Err, context.DeadlineExceeded} }
