package helm

import (
	"bytes"
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/render"
)

// TemplateRequest is one `helm template` run for a caller that has chosen
// the chart and computed the values itself (Kustomize's helmCharts).
type TemplateRequest struct {
	// Root and ChartDir locate a chart directory; or Archive holds a chart
	// archive (.tgz). Exactly one of ChartDir and Archive is set.
	Root     *render.Root
	ChartDir string
	Archive  []byte
	// ArchiveName names the archive in errors.
	ArchiveName string
	// ReleaseName and Namespace are the release's; empty means
	// "release-name" and "default", as `helm template` has them.
	ReleaseName, Namespace string
	// Values are the user-supplied values (the chart's values.yaml is
	// coalesced under them by Helm).
	Values map[string]any
	// IncludeCRDs renders the chart's crds/ (--include-crds); SkipTests
	// leaves out test hooks (--skip-tests); SkipHooks every hook
	// (--no-hooks).
	IncludeCRDs, SkipTests, SkipHooks bool
	// APIVersions (--api-versions) and KubeVersion (--kube-version).
	APIVersions []string
	KubeVersion string
	// DependencyRepos admit the repositories of missing dependencies, as
	// HelmSource.DependencyRepos.
	DependencyRepos []string
}

// Template renders a chart in process as `helm template` would, with the
// renderer's limits and dependency fetching.
func (r *Renderer) Template(ctx context.Context, req TemplateRequest) ([]*unstructured.Unstructured, error) {
	var chrt *chart.Chart
	var files []*loader.BufferedFile
	var err error
	name := req.ChartDir
	if req.Archive != nil {
		name = req.ArchiveName
		if err := checkArchive(name, req.Archive, r.opts.Limits); err != nil {
			return nil, err
		}
		if files, err = loader.LoadArchiveFiles(bytes.NewReader(req.Archive)); err != nil {
			return nil, fmt.Errorf("load chart %s: %w", name, err)
		}
		if chrt, err = loader.LoadFiles(files); err != nil {
			return nil, fmt.Errorf("load chart %s: %w", name, err)
		}
	} else if chrt, files, err = loadChart(ctx, req.Root, req.ChartDir); err != nil {
		return nil, err
	}
	if err := checkInstallable(name, chrt); err != nil {
		return nil, err
	}
	if chrt, err = r.withDependencies(ctx, chrt, files, name, req.DependencyRepos); err != nil {
		return nil, err
	}
	in := installOptions{
		releaseName: req.ReleaseName, namespace: req.Namespace,
		includeCRDs: req.IncludeCRDs, apiVersions: req.APIVersions, kubeVersion: req.KubeVersion,
		skipTests: req.SkipTests, skipHooks: req.SkipHooks,
	}
	if in.releaseName == "" {
		in.releaseName = "release-name"
	}
	return r.install(ctx, chrt, copyValues(req.Values), in)
}

// withDependencies fetches the dependencies missing from chrt's charts/
// when the renderer may, and reloads the chart with them.
func (r *Renderer) withDependencies(ctx context.Context, chrt *chart.Chart, files []*loader.BufferedFile, name string, repos []string) (*chart.Chart, error) {
	err := checkDependencies(chrt)
	if err == nil {
		return chrt, nil
	}
	if !r.opts.FetchDependencies && r.opts.Dependencies == nil {
		return nil, fmt.Errorf("%w: %v (vendor dependencies into charts/ or enable FetchDependencies)", render.ErrRemoteDisabled, err)
	}
	fetched, err := r.fetchDependencies(ctx, chrt, r.opts.Limits, repos)
	if err != nil {
		return nil, err
	}
	if chrt, err = loader.LoadFiles(append(files, fetched...)); err != nil {
		return nil, fmt.Errorf("load chart %s with fetched dependencies: %w", name, err)
	}
	if err := checkDependencies(chrt); err != nil {
		return nil, err
	}
	return chrt, nil
}
