package helm

import (
	"context"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/render"
)

// installOptions are the release settings of one render.
type installOptions struct {
	releaseName, namespace            string
	includeCRDs, skipSchemaValidation bool
	isUpgrade, skipTests, skipHooks   bool
	apiVersions                       []string
	kubeVersion                       string
}

// notesSuffix names the chart's NOTES.txt, which is text for a person and
// never part of the manifest.
const notesSuffix = "NOTES.txt"

// install renders chrt as `helm template` does: the steps of Helm's
// action.Install.RunWithContext with DryRun, ClientOnly and Replace, and of
// action.Configuration.renderResources, without the action package (which
// drags a storage driver, an SQL driver and kubectl into every host).
func (r *Renderer) install(ctx context.Context, chrt *chart.Chart, vals map[string]any, o installOptions) ([]*unstructured.Unstructured, error) {
	if o.namespace == "" {
		o.namespace = "default"
	}
	caps, err := r.capabilities(o)
	if err != nil {
		return nil, err
	}
	if err := chartutil.ValidateReleaseName(o.releaseName); err != nil {
		return nil, fmt.Errorf("%w: release name %q: %v", render.ErrInvalidInput, o.releaseName, err)
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, vals); err != nil {
		return nil, err
	}
	// --is-upgrade only flips the release flags on a dry run, which this is.
	options := chartutil.ReleaseOptions{
		Name: o.releaseName, Namespace: o.namespace, Revision: 1,
		IsInstall: !o.isUpgrade, IsUpgrade: o.isUpgrade,
	}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, vals, options, caps, o.skipSchemaValidation)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	manifest, hooks, err := renderResources(chrt, top, caps, o.includeCRDs)
	if err != nil {
		return nil, err
	}
	return r.objects(manifest, hooks, o.skipTests, o.skipHooks)
}

// capabilities are Helm's client-only capabilities: its defaults, with
// the target's Kubernetes version (else Options.DefaultKubeVersion, else
// Helm's) and the target's API versions added to Helm's default ones.
func (r *Renderer) capabilities(o installOptions) (*chartutil.Capabilities, error) {
	caps := chartutil.DefaultCapabilities.Copy()
	// Copy shares the defaults' slice; a fresh one keeps the append below
	// from ever writing into Helm's package-level defaults.
	apis := make(chartutil.VersionSet, 0, len(caps.APIVersions)+len(o.apiVersions))
	caps.APIVersions = append(append(apis, caps.APIVersions...), o.apiVersions...)
	kv := o.kubeVersion
	if kv == "" {
		kv = r.opts.DefaultKubeVersion
	}
	if kv != "" {
		parsed, err := chartutil.ParseKubeVersion(kv)
		if err != nil {
			return nil, fmt.Errorf("%w: kube version %q: %v", render.ErrInvalidInput, kv, err)
		}
		caps.KubeVersion = *parsed
	}
	return caps, nil
}

// renderResources runs Helm's template engine with no cluster client (so
// lookup returns an empty map, as in `helm template`), drops NOTES.txt,
// and returns the manifest as Helm prints it (the crds/ files when asked,
// then the templates in InstallOrder, each under "---\n# Source: ...")
// and the hooks, sorted as Helm sorts them.
func renderResources(chrt *chart.Chart, top chartutil.Values, caps *chartutil.Capabilities, includeCRDs bool) (string, []*release.Hook, error) {
	if c := chrt.Metadata.KubeVersion; c != "" && !chartutil.IsCompatibleRange(c, caps.KubeVersion.String()) {
		return "", nil, fmt.Errorf("%w: chart requires kubeVersion: %s which is incompatible with Kubernetes %s", render.ErrInvalidInput, c, caps.KubeVersion.String())
	}
	var e engine.Engine
	files, err := e.Render(chrt, top)
	if err != nil {
		return "", nil, err
	}
	for name := range files {
		if strings.HasSuffix(name, notesSuffix) {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	if includeCRDs {
		for _, crd := range chrt.CRDObjects() {
			fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", crd.Filename, string(crd.File.Data))
		}
	}
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	return b.String(), hooks, nil
}

// checkInstallable refuses what `helm template` refuses before rendering:
// only application charts (type "" or "application") are installable.
func checkInstallable(name string, chrt *chart.Chart) error {
	switch chrt.Metadata.Type {
	case "", "application":
		return nil
	}
	return fmt.Errorf("%w: chart %s: %s charts are not installable", render.ErrInvalidInput, name, chrt.Metadata.Type)
}

// checkDependencies reports the dependencies Chart.yaml declares that
// charts/ does not hold, as Helm's action.CheckDependencies does.
func checkDependencies(chrt *chart.Chart) error {
	have := map[string]bool{}
	for _, d := range chrt.Dependencies() {
		have[d.Name()] = true
	}
	var missing []string
	for _, req := range chrt.Metadata.Dependencies {
		if !have[req.Name] {
			missing = append(missing, req.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("found in Chart.yaml, but missing in charts/ directory: %s", strings.Join(missing, ", "))
	}
	return nil
}
