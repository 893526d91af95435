package main

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/imageupdate"
	"github.com/kubegitops/gitops/rbac"
	"sigs.k8s.io/yaml"
)

// maxValuesBytes bounds a values file the parameter table reads.
const maxValuesBytes = 1 << 20

// helmParam is one row of a Helm source's parameter table: a value of
// the chart (its values.yaml and the value files the source selects,
// flattened as Argo CD's repo server flattens them: a.b, list[0]) and the
// source's override of it (spec.source.helm.parameters), marked.
type helmParam struct {
	Name string `json:"name"`
	// Value is the chart's value ("" when the chart has none: a
	// parameter only the override sets).
	Value string `json:"value"`
	// Override is the source's parameter of that name.
	Override    *string `json:"override,omitempty"`
	ForceString bool    `json:"forceString,omitempty"`
	// InChart: the chart's values have this name.
	InChart bool `json:"inChart"`
}

// helmParams is a Helm source's parameters, as Argo CD's app details
// show them.
type helmParams struct {
	// ValueFiles are the files of the chart's folder whose name holds
	// "values" (.yaml, .yml), to choose from; Selected those the source
	// names (helm.valueFiles).
	ValueFiles []string `json:"valueFiles"`
	Selected   []string `json:"selected"`
	// Values is the chart's values.yaml.
	Values string `json:"values"`
	// ValuesOverride is the source's helm.values.
	ValuesOverride string      `json:"valuesOverride"`
	Parameters     []helmParam `json:"parameters"`
}

// kustomizeImage is one image of a Kustomize source: an image the
// overlay renders (with the source's overrides applied), and the
// override (spec.source.kustomize.images) that set it, marked.
type kustomizeImage struct {
	Image    string `json:"image"`
	Override string `json:"override,omitempty"`
}

// kustomizeParams is a Kustomize source's images.
type kustomizeParams struct {
	Images []kustomizeImage `json:"images"`
	// Overrides are the source's image overrides, every one (also those
	// that match no rendered image).
	Overrides []string `json:"overrides"`
}

// sourceParams is one source's parameters.
type sourceParams struct {
	Index     int              `json:"index"`
	RepoURL   string           `json:"repoURL"`
	Path      string           `json:"path,omitempty"`
	Chart     string           `json:"chart,omitempty"`
	Type      string           `json:"type,omitempty"`
	Helm      *helmParams      `json:"helm,omitempty"`
	Kustomize *kustomizeParams `json:"kustomize,omitempty"`
	// Error says why the source could not be read.
	Error string `json:"error,omitempty"`
}

// apiParameters answers the parameters of each source of the app, for a
// source with or without a helm or kustomize block (Argo CD's
// RepoServerService.GetAppDetails): its type as a render detects it, a
// Helm source's values and parameters with the overrides marked, a
// Kustomize source's images with the overrides marked. It needs
// "applications, get".
func (s *server) apiParameters(w http.ResponseWriter, r *http.Request, c caller) {
	a, _, err := s.appFor(r, c, rbac.ResourceApplications, rbac.ActionGet)
	if err != nil {
		deny(w, err)
		return
	}
	out := []sourceParams{}
	for i, src := range a.Spec.AllSources() {
		out = append(out, s.paramsOf(r.Context(), a, i, src))
	}
	writeJSON(w, http.StatusOK, out)
}

// paramsOf reads one source's parameters.
func (s *server) paramsOf(ctx context.Context, a *gitops.Application, i int, src v1alpha1.ApplicationSource) sourceParams {
	p := sourceParams{Index: i, RepoURL: src.RepoURL, Path: src.Path, Chart: src.Chart}
	t, err := s.sourceTreeOf(ctx, a, src)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	p.Type = t.Type
	switch t.Type {
	case sourceHelm:
		hp, err := helmParamsOf(t, src.Helm)
		if err != nil {
			p.Error = err.Error()
		}
		p.Helm = hp
	case sourceKustomize:
		kp, err := s.kustomizeParamsOf(ctx, a, i, src)
		if err != nil {
			p.Error = err.Error()
		}
		p.Kustomize = kp
	}
	return p
}

// helmParamsOf reads a chart's values and lists its parameters with the
// overrides of h.
func helmParamsOf(t sourceTree, h *v1alpha1.ApplicationSourceHelm) (*helmParams, error) {
	hp := &helmParams{ValueFiles: []string{}, Selected: []string{}, Parameters: []helmParam{}}
	if h != nil {
		hp.Selected = append(hp.Selected, h.ValueFiles...)
		hp.ValuesOverride = h.Values
	}
	_ = fs.WalkDir(t.FS, t.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		ext := strings.ToLower(path.Ext(p))
		if strings.Contains(d.Name(), "values") && (ext == ".yaml" || ext == ".yml") {
			rel := strings.TrimPrefix(strings.TrimPrefix(p, t.Path), "/")
			hp.ValueFiles = append(hp.ValueFiles, rel)
		}
		return nil
	})
	flat := map[string]string{}
	files := append([]string{"values.yaml"}, hp.Selected...)
	var errs []string
	for i, f := range files {
		b, err := readValuesFile(t, f)
		switch {
		case err != nil && i == 0:
			continue // a chart need not have values.yaml
		case err != nil:
			errs = append(errs, err.Error())
			continue
		}
		if i == 0 {
			hp.Values = string(b)
		}
		var vals map[string]any
		if err := yaml.Unmarshal(b, &vals); err != nil {
			errs = append(errs, fmt.Sprintf("value file %s: %v", f, err))
			continue
		}
		flattenValues(vals, flat, "")
	}
	overrides := map[string]v1alpha1.HelmParameter{}
	if h != nil {
		for _, o := range h.Parameters {
			overrides[o.Name] = o
		}
	}
	for name, v := range flat {
		row := helmParam{Name: name, Value: v, InChart: true}
		if o, ok := overrides[name]; ok {
			row.Override, row.ForceString = &o.Value, o.ForceString
		}
		hp.Parameters = append(hp.Parameters, row)
	}
	for name, o := range overrides {
		if _, ok := flat[name]; !ok {
			hp.Parameters = append(hp.Parameters, helmParam{Name: name, Override: &o.Value, ForceString: o.ForceString})
		}
	}
	slices.SortFunc(hp.Parameters, func(x, y helmParam) int { return strings.Compare(x.Name, y.Name) })
	if len(errs) > 0 {
		return hp, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return hp, nil
}

// readValuesFile reads a value file of the chart's folder (a path
// relative to it that stays inside the repository); a remote file or one
// of another source ($ref/...) is not read here.
func readValuesFile(t sourceTree, f string) ([]byte, error) {
	if strings.Contains(f, "://") || strings.HasPrefix(f, "$") {
		return nil, fmt.Errorf("value file %s: not listed here (a remote file or another source's)", f)
	}
	p := path.Clean(path.Join(t.Path, f))
	if !fs.ValidPath(p) {
		return nil, fmt.Errorf("value file %s: outside the repository", f)
	}
	st, err := fs.Stat(t.FS, p)
	if err != nil {
		return nil, fmt.Errorf("value file %s: %w", f, err)
	}
	if st.Size() > maxValuesBytes {
		return nil, fmt.Errorf("value file %s: larger than %d bytes", f, maxValuesBytes)
	}
	return fs.ReadFile(t.FS, p)
}

// flattenValues names every leaf of a values tree as Argo CD's repo
// server and `helm --set` do: maps by dots, lists by [index]; a null leaf
// is "".
func flattenValues(v any, out map[string]string, prefix string) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			name := k
			if prefix != "" {
				name = prefix + "." + k
			}
			flattenValues(x, out, name)
		}
	case []any:
		for i, x := range t {
			flattenValues(x, out, fmt.Sprintf("%s[%d]", prefix, i))
		}
	case nil:
		out[prefix] = ""
	default:
		out[prefix] = fmt.Sprint(t)
	}
}

// kustomizeParamsOf lists the images source i of a renders (Argo CD's
// app details of a Kustomize source: the images of its build, the
// overrides applied), each with the override that set it. Only a
// single-source app is rendered for it; a source of several lists its
// overrides alone.
func (s *server) kustomizeParamsOf(ctx context.Context, a *gitops.Application, i int, src v1alpha1.ApplicationSource) (*kustomizeParams, error) {
	kp := &kustomizeParams{Images: []kustomizeImage{}, Overrides: []string{}}
	if src.Kustomize != nil {
		kp.Overrides = append(kp.Overrides, src.Kustomize.Images...)
	}
	if len(a.Spec.Sources) > 0 {
		return kp, nil
	}
	ctx, cancel := context.WithTimeout(ctx, kubeTimeout*3)
	defer cancel()
	objs, _, err := s.opts.Engine.Render(ctx, a)
	if err != nil {
		return kp, fmt.Errorf("render: %w", err)
	}
	for _, img := range imageupdate.ImagesOf(objs) {
		row := kustomizeImage{Image: img}
		for _, o := range kp.Overrides {
			if overrideSets(o, img) {
				row.Override = o
			}
		}
		kp.Images = append(kp.Images, row)
	}
	return kp, nil
}

// overrideSets reports whether a Kustomize image override (as
// kustomize edit set image takes it: name=newName[:tag|@digest], or
// name[:tag|@digest]) is the one that made img: the image it sets has
// img's name.
func overrideSets(override, img string) bool {
	target := override
	if _, after, ok := strings.Cut(override, "="); ok {
		target = after
	}
	return imageName(target) == imageName(img)
}

// imageName is an image reference without its tag and digest.
func imageName(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}
