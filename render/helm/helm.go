package helm

import (
	"context"
	"net/http"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/resource"
)

// Options configure the Helm renderer (policy shared by every application).
type Options struct {
	// Limits bound the files read (chart, values, archives) and the
	// decoding of the rendered manifests.
	Limits render.Limits
	// AllowedValueSchemes lists URL schemes value files may use ("https").
	// Default none: every URL is refused.
	AllowedValueSchemes []string
	// RemoteTimeout bounds one fetch (a remote value file, a repository
	// index, a dependency archive). Default 30 s.
	RemoteTimeout time.Duration
	// FetchDependencies downloads dependencies missing from charts/ from
	// their http(s) chart repositories, at the version Chart.lock pins (else
	// the Chart.yaml constraint), into memory. Default false: a missing
	// dependency fails the render and nothing is fetched. Downloads are
	// shared by the renders of one Renderer and bounded by Limits.
	FetchDependencies bool
	// DefaultKubeVersion is used when Input.KubeVersion is empty. Default:
	// Helm's own default.
	DefaultKubeVersion string
	// Dependencies, when set, fetches the dependencies missing from
	// charts/ (from http(s) and oci:// repositories) instead of the
	// renderer's own downloader, and whether or not FetchDependencies is
	// set; the engine sets it to fetch through its chart source (shared
	// cache, credentials, the app project's sourceRepos). It is not part of
	// the render cache key; HelmSource.DependencyRepos, which it is given,
	// is.
	Dependencies DependencyFetcher `json:"-"`
}

// DependencyFetcher fetches the archive of one chart dependency.
type DependencyFetcher interface {
	// FetchDependency returns the chart archive (.tgz) of req.Name at
	// req.Version (a version or a constraint) from req.Repository, or an
	// error naming them. It must refuse a repository that req.Allowed does
	// not admit.
	FetchDependency(ctx context.Context, req DependencyRequest) ([]byte, error)
}

// DependencyRequest is one dependency to fetch.
type DependencyRequest struct {
	// Repository is the dependency's repository URL as Chart.yaml has it
	// ("https://charts.example.com", "oci://registry.example.com/charts").
	Repository string
	// Name and Version are the chart and the version or constraint
	// (Chart.lock's pinned version when there is one).
	Name, Version string
	// Allowed are HelmSource.DependencyRepos: the repository URL patterns
	// the application may fetch from, read as the project's sourceRepos
	// (project.SourcePermitted); nil admits any.
	Allowed []string
}

// DefaultOptions returns the defaults: no remote value files, no fetching.
func DefaultOptions() Options {
	return Options{Limits: render.DefaultLimits(), RemoteTimeout: 30 * time.Second}
}

// Renderer renders Helm charts.
type Renderer struct {
	opts Options
	http *http.Client
	deps *dependencyCache
}

// New returns a Helm Renderer.
func New(opts Options) *Renderer {
	opts.Limits = opts.Limits.WithDefaults()
	if opts.RemoteTimeout <= 0 {
		opts.RemoteTimeout = 30 * time.Second
	}
	return &Renderer{opts: opts, http: &http.Client{Timeout: opts.RemoteTimeout}, deps: &dependencyCache{entries: map[string][]byte{}}}
}

// Identity implements render.Identifier.
func (r *Renderer) Identity(render.Input) (render.Identity, error) {
	// A fetcher decides whether a chart with missing dependencies renders
	// at all, so its presence is part of the key (itself is not encodable).
	return render.Identity{Tool: render.KindHelm, Version: render.LibraryVersion("helm.sh/helm/v3"), Options: struct {
		Options
		DependencyFetcher bool
	}{r.opts, r.opts.Dependencies != nil}}, nil
}

// Render implements render.Renderer.
func (r *Renderer) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	objs, err := r.render(ctx, in)
	return objs, render.Wrap(render.KindHelm, in, err)
}

func (r *Renderer) render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	src := render.HelmSource{}
	if in.Helm != nil {
		src = *in.Helm
	}
	root := render.NewRoot(in.FS, r.opts.Limits)
	chartDir, err := root.Resolve(in.Path)
	if err != nil {
		return nil, err
	}
	chrt, files, err := loadChart(ctx, root, chartDir)
	if err != nil {
		return nil, err
	}
	if err := checkInstallable(chartDir, chrt); err != nil {
		return nil, err
	}
	if chrt, err = r.withDependencies(ctx, chrt, files, chartDir, src.DependencyRepos); err != nil {
		return nil, err
	}
	vals, err := r.values(ctx, root, chartDir, src)
	if err != nil {
		return nil, err
	}

	return r.install(ctx, chrt, vals, installOptions{
		releaseName: releaseName(src, in), namespace: in.Namespace,
		includeCRDs: !src.SkipCRDs, skipSchemaValidation: src.SkipSchemaValidation,
		isUpgrade: src.IsUpgrade, skipTests: src.SkipTests,
		apiVersions: in.APIVersions, kubeVersion: in.KubeVersion,
	})
}

// objects decodes the manifest and the hooks, in `helm template` order.
func (r *Renderer) objects(manifest string, hooks []*release.Hook, skipTests, skipHooks bool) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	objs, err := resource.Decode("helm:manifest", []byte(manifest), r.opts.Limits.Decode)
	if err != nil {
		return nil, err
	}
	out = append(out, objs...)
	if skipHooks {
		return out, nil
	}
	for _, h := range hooks {
		if skipTests && isTestHook(h) {
			continue
		}
		objs, err := resource.Decode(h.Path, []byte(h.Manifest), r.opts.Limits.Decode)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func isTestHook(h *release.Hook) bool {
	for _, e := range h.Events {
		if e == release.HookTest {
			return true
		}
	}
	return false
}

func releaseName(src render.HelmSource, in render.Input) string {
	switch {
	case src.ReleaseName != "":
		return src.ReleaseName
	case in.AppName != "":
		return in.AppName
	}
	return "release-name"
}
