package helm

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
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
	return render.Identity{Tool: render.KindHelm, Version: render.LibraryVersion("helm.sh/helm/v3"), Options: r.opts}, nil
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
	chrt, files, err := loadChart(root, chartDir)
	if err != nil {
		return nil, err
	}
	if err := action.CheckDependencies(chrt, chrt.Metadata.Dependencies); err != nil {
		if !r.opts.FetchDependencies {
			return nil, fmt.Errorf("%w: %v (vendor dependencies into charts/ or enable FetchDependencies)", render.ErrRemoteDisabled, err)
		}
		fetched, ferr := r.fetchDependencies(ctx, chrt, root.Limits())
		if ferr != nil {
			return nil, ferr
		}
		if chrt, err = loader.LoadFiles(append(files, fetched...)); err != nil {
			return nil, fmt.Errorf("load chart %s with fetched dependencies: %w", chartDir, err)
		}
		if err := action.CheckDependencies(chrt, chrt.Metadata.Dependencies); err != nil {
			return nil, err
		}
	}
	vals, err := r.values(ctx, root, chartDir, src)
	if err != nil {
		return nil, err
	}

	cfg := &action.Configuration{Log: func(string, ...any) {}}
	install := action.NewInstall(cfg)
	install.DryRun = true
	install.DryRunOption = "true"
	install.ClientOnly = true
	install.Replace = true
	install.ReleaseName = releaseName(src, in)
	install.Namespace = in.Namespace
	if install.Namespace == "" {
		install.Namespace = "default"
	}
	install.IncludeCRDs = !src.SkipCRDs
	install.SkipCRDs = src.SkipCRDs
	install.SkipSchemaValidation = src.SkipSchemaValidation
	install.IsUpgrade = src.IsUpgrade
	install.APIVersions = chartutil.VersionSet(in.APIVersions)
	kv := in.KubeVersion
	if kv == "" {
		kv = r.opts.DefaultKubeVersion
	}
	if kv != "" {
		parsed, err := chartutil.ParseKubeVersion(kv)
		if err != nil {
			return nil, fmt.Errorf("%w: kube version %q: %v", render.ErrInvalidInput, kv, err)
		}
		install.KubeVersion = parsed
	}
	rel, err := install.RunWithContext(ctx, chrt, vals)
	if err != nil {
		return nil, err
	}
	return r.objects(rel, src.SkipTests)
}

// objects decodes the manifest and the hooks, in `helm template` order.
func (r *Renderer) objects(rel *release.Release, skipTests bool) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	objs, err := resource.Decode("helm:manifest", []byte(rel.Manifest), r.opts.Limits.Decode)
	if err != nil {
		return nil, err
	}
	out = append(out, objs...)
	for _, h := range rel.Hooks {
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
