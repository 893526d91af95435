package helm

import (
	"bytes"
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/kubegitops/gitops/project"
	"github.com/kubegitops/gitops/render"
)

// FetchChart returns the archive of the chart req.Name at req.Version (a
// version or a constraint; empty means the latest) from req.Repository:
// through Options.Dependencies when set (the engine's chart source, which
// applies the project's sourceRepos), else, with FetchDependencies, by the
// renderer's own download from an http(s) repository, refusing one that no
// pattern of req.Allowed (project.SourcePermitted, the sourceRepos rule)
// admits. Without either it fails
// with render.ErrRemoteDisabled.
func (r *Renderer) FetchChart(ctx context.Context, req DependencyRequest) ([]byte, error) {
	scheme := render.URLScheme(req.Repository)
	if scheme != "http" && scheme != "https" && scheme != "oci" {
		return nil, fmt.Errorf("%w: chart %s from repository %q: only http(s) and oci:// chart repositories are fetched", render.ErrSchemeNotAllowed, req.Name, redactURL(req.Repository))
	}
	if r.opts.Dependencies != nil {
		return r.opts.Dependencies.FetchDependency(ctx, req)
	}
	if !r.opts.FetchDependencies {
		return nil, fmt.Errorf("%w: chart %s from %s (enable FetchDependencies or set Dependencies)", render.ErrRemoteDisabled, req.Name, redactURL(req.Repository))
	}
	if scheme == "oci" {
		return nil, fmt.Errorf("%w: chart %s from %s: OCI charts are fetched through Options.Dependencies", render.ErrRemoteDisabled, req.Name, redactURL(req.Repository))
	}
	if req.Allowed != nil && !project.SourcePermitted(req.Allowed, req.Repository) {
		return nil, fmt.Errorf("%w: chart %s: repository %s is not among the allowed repositories", render.ErrRemoteDisabled, req.Name, redactURL(req.Repository))
	}
	version := req.Version
	if version == "" {
		version = "*"
	}
	d := &chart.Dependency{Name: req.Name, Version: version, Repository: req.Repository}
	key := req.Repository + "|" + req.Name + "|" + version
	return r.deps.get(key, func() ([]byte, error) { return r.download(ctx, d, r.opts.Limits) })
}

// MergeValues merges over into base as Helm merges successive -f files:
// maps are merged key by key, any other value of over replaces base's.
// Neither argument is modified.
func MergeValues(base, over map[string]any) map[string]any {
	return mergeMaps(copyValues(base), copyValues(over))
}

// ArchiveFile returns the file name (relative to the chart's directory)
// of a chart archive, or nil when the chart has none. The archive must fit
// the renderer's limits.
func (r *Renderer) ArchiveFile(archive []byte, name string) ([]byte, error) {
	if err := checkArchive(name, archive, r.opts.Limits); err != nil {
		return nil, err
	}
	files, err := loader.LoadArchiveFiles(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("read chart archive: %w", err)
	}
	for _, f := range files {
		if f.Name == name {
			return f.Data, nil
		}
	}
	return nil, nil
}
