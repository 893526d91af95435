package kustomize

import (
	"context"
	"fmt"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/openapi"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/resource"
)

// Options configure the Kustomize renderer (policy shared by every
// application).
type Options struct {
	// Limits bound the files read and the decoding of the output.
	Limits render.Limits
	// LoadRestrictions is kustomize's --load-restrictor. Default
	// types.LoadRestrictionsRootOnly: a kustomization loads files only from
	// its own directory and below (bases and components are directories
	// and may live elsewhere in the tree).
	LoadRestrictions types.LoadRestrictions
	// AllowRemoteResources lets kustomizations name remote resources:
	// http(s) files (fetched by krusty) and git bases (cloned by kustomize
	// with the git binary into a temporary directory that is read through
	// its own Root and removed after the build). Default false: any remote
	// entry fails the render before anything is fetched. With it on, the
	// output depends on the network, which the cache key cannot see: use a
	// short cache TTL or pin refs.
	AllowRemoteResources bool
	// Reorder is krusty's output order. Default
	// krusty.ReorderOptionUnspecified: the kustomization's sortOptions when
	// it has some, else kustomize's legacy kind order, which is what
	// `kustomize build` (and so Argo CD) prints.
	Reorder krusty.ReorderOption
	// AddManagedByLabel adds app.kubernetes.io/managed-by: kustomize-<v>.
	AddManagedByLabel bool
	// Helm, when set, inflates kustomizations' helmCharts in process with
	// this renderer, as `kustomize build --enable-helm` does with a helm
	// binary: charts from chartHome (default "charts" beside the
	// kustomization), else fetched from their repo (http(s) or oci://)
	// through Helm.FetchChart, which admits only the repositories of
	// Input.Helm.DependencyRepos (the engine sets the app project's
	// sourceRepos). valuesFile, valuesInline with valuesMerge,
	// additionalValuesFiles, releaseName, namespace, includeCRDs,
	// skipTests, skipHooks, apiVersions and kubeVersion (else the Input's)
	// are honoured; nameTemplate, devel and helmGlobals.configHome are
	// refused. Without releaseName the release is "release-name" (the
	// helm binary would generate a random one). Default nil: helmCharts
	// fail the render with render.ErrRemoteDisabled.
	Helm *helm.Renderer `json:"-"`
	// Versions are the kustomize binaries apps may name in their
	// kustomize.version (Argo CD's kustomize.version.<name>), by name. An
	// app that names one is built by running it (see Binary); an app that
	// names another fails with *VersionNotRegisteredError. Default none.
	Versions map[string]Binary `json:",omitempty"`
	// BinaryTimeout bounds one run of a kustomize binary. Default 90 s
	// (Argo CD's ARGOCD_EXEC_TIMEOUT).
	BinaryTimeout time.Duration `json:",omitempty"`
	// MaxBinaryOutputBytes bounds a kustomize binary's standard output.
	// Default 64 MiB.
	MaxBinaryOutputBytes int64 `json:",omitempty"`
	// TempDir is where the private copies a binary runs on are made.
	// Default os.TempDir().
	TempDir string `json:",omitempty"`
}

// DefaultOptions returns root-only loading, no remote resources, and
// kustomize build's order.
func DefaultOptions() Options {
	return Options{
		Limits:           render.DefaultLimits(),
		LoadRestrictions: types.LoadRestrictionsRootOnly,
		Reorder:          krusty.ReorderOptionUnspecified,
	}
}

// Renderer renders Kustomize applications.
type Renderer struct {
	opts     Options
	lockWait atomic.Int64 // nanoseconds spent waiting for openAPIState
}

// LockWait returns the total time this renderer's builds waited for
// kustomize's process-wide OpenAPI lock: near zero unless builds that
// select their own schema run alongside.
func (r *Renderer) LockWait() time.Duration { return time.Duration(r.lockWait.Load()) }

// New returns a Kustomize Renderer.
func New(opts Options) *Renderer {
	opts.Limits = opts.Limits.WithDefaults()
	if opts.LoadRestrictions == types.LoadRestrictionsUnknown {
		opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	}
	if opts.Reorder == "" {
		opts.Reorder = krusty.ReorderOptionUnspecified
	}
	return &Renderer{opts: opts}
}

// Identity implements render.Identifier.
func (r *Renderer) Identity(in render.Input) (render.Identity, error) {
	opts := struct {
		Options
		Helm *render.Identity `json:",omitempty"`
	}{Options: r.opts}
	if r.opts.Helm != nil {
		id, err := r.opts.Helm.Identity(in)
		if err != nil {
			return render.Identity{}, err
		}
		opts.Helm = &id
	}
	version := render.LibraryVersion("sigs.k8s.io/kustomize/api")
	if in.Kustomize != nil && in.Kustomize.Version != "" {
		// The binary's path and arguments are in Options.Versions.
		version = "binary:" + in.Kustomize.Version
	}
	return render.Identity{Tool: render.KindKustomize, Version: version, Options: opts}, nil
}

// openAPIState guards kustomize's process-wide OpenAPI schema: builds with
// the default schema share it (read lock); a build that selects its own
// schema holds it alone (write lock) and resets it when done. It must be
// process-wide because the state it guards is.
var openAPIState sync.RWMutex

// Render implements render.Renderer.
func (r *Renderer) Render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	objs, err := r.render(ctx, in)
	return objs, render.Wrap(render.KindKustomize, in, err)
}

func (r *Renderer) render(ctx context.Context, in render.Input) ([]*unstructured.Unstructured, error) {
	root := render.NewRoot(in.FS, r.opts.Limits)
	dir, err := root.Resolve(in.Path)
	if err != nil {
		return nil, err
	}
	if in.Kustomize != nil && in.Kustomize.Version != "" {
		return r.renderBinary(ctx, in, root, dir)
	}
	fsys := NewFileSystem(root)
	if r.opts.AllowRemoteResources {
		fsys.allowClones()
	}
	kfile, k, err := readKustomization(root, dir)
	if err != nil {
		return nil, err
	}
	if in.Kustomize != nil {
		data, err := applyOverrides(root, dir, kfile, k, *in.Kustomize)
		if err != nil {
			return nil, err
		}
		fsys.overlays[kfile] = data
	}
	charted, err := checkRemote(root, fsys, dir, r.opts.AllowRemoteResources, r.opts.Helm != nil)
	if err != nil {
		return nil, err
	}
	for _, kf := range charted {
		if err := r.inflateHelmCharts(ctx, root, fsys, kf, in); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	kopts := krusty.MakeDefaultOptions()
	kopts.LoadRestrictions = r.opts.LoadRestrictions
	kopts.Reorder = r.opts.Reorder
	kopts.AddManagedbyLabel = r.opts.AddManagedByLabel
	kopts.PluginConfig = types.DisabledPluginConfig()

	customSchema := len(k.OpenAPI) > 0
	waitStart := time.Now()
	if customSchema {
		openAPIState.Lock()
		defer func() {
			openapi.ResetOpenAPI()
			openAPIState.Unlock()
		}()
	} else {
		openAPIState.RLock()
		defer openAPIState.RUnlock()
	}
	r.lockWait.Add(int64(time.Since(waitStart)))
	resMap, err := krusty.MakeKustomizer(kopts).Run(fsys, abs(dir))
	if refused := fsys.Refused(); refused != nil {
		// Whatever kustomize made of the read error: the encrypted file
		// is the cause to report.
		return nil, refused
	}
	if err != nil {
		return nil, err
	}
	data, err := resMap.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("encode kustomize output: %w", err)
	}
	return resource.Decode(path.Join(in.Path, "(kustomize build)"), data, r.opts.Limits.Decode)
}
