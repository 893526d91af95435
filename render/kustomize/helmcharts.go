package kustomize

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
)

// generatedPrefix names the overlay files that hold inflated charts, in
// the directory of their kustomization.
const generatedPrefix = ".gitops-helmchart-"

// inflateHelmCharts renders the helmCharts of the kustomization file kfile
// in process, as `kustomize build --enable-helm` runs `helm template` for
// each, and rewrites the kustomization (in memory) with the outputs as
// resources and without helmCharts and helmGlobals. An entry without a
// namespace is released into the kustomization's namespace, as kustomize
// does. Each output object is marked with kustomize's helm-generated
// annotation, so the namespace transformer leaves it alone as it leaves
// Helm's output alone.
func (r *Renderer) inflateHelmCharts(ctx context.Context, root *render.Root, fsys *FileSystem, kfile string, in render.Input) error {
	data, err := fsys.ReadFile(abs(kfile))
	if err != nil {
		return err
	}
	k := &types.Kustomization{}
	if err := yaml.Unmarshal(data, k); err != nil {
		return &render.PathError{Op: "parse", Path: kfile, Err: errors.New("not a kustomization")}
	}
	kdir := path.Dir(kfile)
	home := types.HelmDefaultHome
	if g := k.HelmGlobals; g != nil {
		if g.ConfigHome != "" {
			return helmChartError(kfile, "", fmt.Errorf("%w: helmGlobals.configHome: the in-process Helm reads repositories and credentials from the engine, not from a Helm config home", render.ErrInvalidInput))
		}
		if g.ChartHome != "" {
			home = g.ChartHome
		}
	}
	for i, c := range k.HelmCharts {
		if c.Namespace == "" {
			// kustomize releases a chart into the kustomization's namespace.
			c.Namespace = k.Namespace
		}
		objs, err := r.inflateChart(ctx, root, kdir, home, c, in)
		if err != nil {
			return helmChartError(kfile, c.Name, err)
		}
		out, err := generatedYAML(objs)
		if err != nil {
			return helmChartError(kfile, c.Name, err)
		}
		name := fmt.Sprintf("%s%d-%s.yaml", generatedPrefix, i, c.Name)
		fsys.overlays[path.Join(kdir, name)] = out
		k.Resources = append(k.Resources, name)
	}
	k.HelmCharts, k.HelmGlobals = nil, nil
	rewritten, err := yaml.Marshal(k)
	if err != nil {
		return fmt.Errorf("encode %s: %w", kfile, err)
	}
	fsys.overlays[kfile] = rewritten
	return nil
}

func helmChartError(kfile, chart string, err error) error {
	op := "inflate helmCharts"
	if chart != "" {
		op = "inflate helm chart " + chart
	}
	return &render.PathError{Op: op, Path: kfile, Err: err}
}

// inflateChart renders one helmCharts entry.
func (r *Renderer) inflateChart(ctx context.Context, root *render.Root, kdir, home string, c types.HelmChart, in render.Input) ([]*unstructured.Unstructured, error) {
	switch {
	case c.Name == "":
		return nil, fmt.Errorf("%w: chart name cannot be empty", render.ErrInvalidInput)
	case strings.HasPrefix(c.Name, "-") || strings.HasPrefix(c.ReleaseName, "-"):
		return nil, fmt.Errorf("%w: chart and release names must not start with '-'", render.ErrInvalidInput)
	case c.NameTemplate != "":
		return nil, fmt.Errorf("%w: nameTemplate is not supported in process; set releaseName", render.ErrInvalidInput)
	case c.Devel:
		return nil, fmt.Errorf("%w: devel is not supported; pin the pre-release version", render.ErrInvalidInput)
	}
	merge := c.ValuesMerge
	if merge == "" {
		merge = "override"
	}
	if merge != "override" && merge != "merge" && merge != "replace" {
		return nil, fmt.Errorf("%w: valuesMerge must be one of [merge override replace], got %q", render.ErrInvalidInput, c.ValuesMerge)
	}
	var allowed []string
	if in.Helm != nil {
		allowed = in.Helm.DependencyRepos
	}
	req := helm.TemplateRequest{
		ReleaseName: c.ReleaseName, Namespace: c.Namespace,
		IncludeCRDs: c.IncludeCRDs, SkipTests: c.SkipTests, SkipHooks: c.SkipHooks,
		APIVersions: c.ApiVersions, KubeVersion: c.KubeVersion, DependencyRepos: allowed,
	}
	// kustomize build's --helm-api-versions and --helm-kube-version apply
	// when the entry sets none: the engine passes the target cluster's.
	if len(req.APIVersions) == 0 {
		req.APIVersions = in.APIVersions
	}
	if req.KubeVersion == "" {
		req.KubeVersion = in.KubeVersion
	}
	// Every path is checked before anything is fetched.
	var valuesPath string
	if c.ValuesFile != "" {
		p, err := r.subPath(root, kdir, c.ValuesFile, "valuesFile")
		if err != nil {
			return nil, err
		}
		valuesPath = p
	}
	additional := make([]string, len(c.AdditionalValuesFiles))
	for i, f := range c.AdditionalValuesFiles {
		p, err := r.subPath(root, kdir, f, "additionalValuesFiles")
		if err != nil {
			return nil, err
		}
		additional[i] = p
	}
	chartHome, err := r.subPath(root, kdir, home, "helmGlobals.chartHome")
	if err != nil {
		return nil, err
	}
	if c.Version != "" && c.Repo != "" {
		chartHome = path.Join(chartHome, c.Name+"-"+c.Version)
	}
	chartDir := path.Join(chartHome, c.Name)
	var chartValues []byte
	if info, err := root.Stat(chartDir); err == nil && info.IsDir() {
		req.Root, req.ChartDir = root, chartDir
		if chartValues, err = root.ReadFile(path.Join(chartDir, "values.yaml")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	} else {
		if c.Repo == "" {
			return nil, fmt.Errorf("%w: no repo specified for pull, no chart found at %s", fs.ErrNotExist, chartDir)
		}
		archive, err := r.opts.Helm.FetchChart(ctx, helm.DependencyRequest{Repository: c.Repo, Name: c.Name, Version: c.Version, Allowed: allowed})
		if err != nil {
			return nil, err
		}
		req.Archive, req.ArchiveName = archive, c.Name+"-"+c.Version+".tgz"
		if chartValues, err = r.opts.Helm.ArchiveFile(archive, "values.yaml"); err != nil {
			return nil, err
		}
	}
	valuesData := chartValues
	if valuesPath != "" {
		if valuesData, err = root.ReadFile(valuesPath); err != nil {
			return nil, err
		}
	}
	if len(c.ValuesInline) > 0 {
		if valuesData, err = mergeInline(valuesData, c.ValuesInline, merge); err != nil {
			return nil, err
		}
	}
	vals, err := parseValues("values", valuesData)
	if err != nil {
		return nil, err
	}
	for i, f := range c.AdditionalValuesFiles {
		data, err := root.ReadFile(additional[i])
		if err != nil {
			return nil, err
		}
		more, err := parseValues(f, data)
		if err != nil {
			return nil, err
		}
		vals = helm.MergeValues(vals, more)
	}
	req.Values = vals
	return r.opts.Helm.Template(ctx, req)
}

// subPath resolves a path a kustomization names; with root-only loading
// it must stay under the kustomization's directory, as kustomize's loader
// requires.
func (r *Renderer) subPath(root *render.Root, kdir, p, field string) (string, error) {
	full, err := root.Sub(kdir, p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	if r.opts.LoadRestrictions == types.LoadRestrictionsRootOnly && kdir != "." && full != kdir && !strings.HasPrefix(full, kdir+"/") {
		return "", &render.PathError{Op: "load", Path: p, Err: fmt.Errorf("%w: %s is outside the kustomization's directory %s (load restrictor)", render.ErrOutsideRoot, field, kdir)}
	}
	return full, nil
}

// mergeInline merges valuesInline with the values file as kustomize does:
// override (the default) lets the inline values win, merge lets the file
// win, replace uses the inline values alone.
func mergeInline(file []byte, inline map[string]any, mode string) ([]byte, error) {
	if mode == "replace" {
		return yaml.Marshal(inline)
	}
	fileNode, err := kyaml.Parse(string(file))
	if err != nil || fileNode.IsNil() {
		if strings.TrimSpace(string(file)) != "" {
			return nil, fmt.Errorf("%w: values file is not YAML", render.ErrInvalidInput)
		}
		fileNode, _ = kyaml.FromMap(map[string]any{})
	}
	inlineNode, err := kyaml.FromMap(inline)
	if err != nil {
		return nil, fmt.Errorf("%w: valuesInline: %v", render.ErrInvalidInput, err)
	}
	var out *kyaml.RNode
	if mode == "override" {
		out, err = merge2.Merge(inlineNode, fileNode.Copy(), kyaml.MergeOptions{})
	} else {
		out, err = merge2.Merge(fileNode, inlineNode.Copy(), kyaml.MergeOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("%w: merge valuesInline: %v", render.ErrInvalidInput, err)
	}
	m, err := out.Map()
	if err != nil {
		return nil, fmt.Errorf("%w: merged values: %v", render.ErrInvalidInput, err)
	}
	return yaml.Marshal(m)
}

// parseValues reads a values document as Helm reads a -f file.
func parseValues(name string, data []byte) (map[string]any, error) {
	vals := map[string]any{}
	if err := yaml.Unmarshal(data, &vals); err != nil {
		return nil, fmt.Errorf("%w: %s is not a YAML map", render.ErrInvalidInput, name)
	}
	if vals == nil {
		vals = map[string]any{}
	}
	return vals, nil
}

// generatedYAML encodes the chart's objects as a resource file, each
// marked as Helm's output.
func generatedYAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var b strings.Builder
	for _, o := range objs {
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[konfig.HelmGeneratedAnnotation] = "true"
		o.SetAnnotations(a)
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return []byte(b.String()), nil
}
