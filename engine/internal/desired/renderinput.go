package desired

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/source"
)

// renderInput maps an Argo CD source onto the renderer's input, with the
// target cluster's version and API versions.
func renderInput(app *v1alpha1.Application, src v1alpha1.ApplicationSource, snap source.Snapshot, dest Destination) (render.Input, error) {
	if v1alpha1.IsAbsolutePath(src.Path) {
		// Argo CD refuses an absolute app path rather than reading it from
		// the repository root.
		return render.Input{}, &render.PathError{Op: "resolve", Path: src.Path, Err: render.ErrAbsolutePath}
	}
	path := strings.TrimRight(src.Path, "/")
	if path == "" {
		path = "."
	}
	in := render.Input{FS: snap, Path: path, AppName: app.Name, Namespace: app.Spec.Destination.Namespace, KubeVersion: dest.KubeVersion, APIVersions: dest.APIVersions}
	if src.Chart != "" {
		// A chart's snapshot is the chart itself.
		in.Path, in.Tool = ".", render.KindHelm
	}
	if d := src.Directory; d != nil {
		in.Directory = &render.DirectorySource{Recurse: d.Recurse, Include: d.Include, Exclude: d.Exclude, DisableExtensionFilter: d.DisableExtensionFilter}
		if len(d.Jsonnet.ExtVars)+len(d.Jsonnet.TLAs)+len(d.Jsonnet.Libs) > 0 {
			in.Jsonnet = &render.JsonnetSource{ExtVars: jsonnetVars(d.Jsonnet.ExtVars), TLAs: jsonnetVars(d.Jsonnet.TLAs), Libs: d.Jsonnet.Libs}
		}
	}
	if h := src.Helm; h != nil {
		hs := &render.HelmSource{ReleaseName: h.ReleaseName, ValueFiles: h.ValueFiles, IgnoreMissingValueFiles: h.IgnoreMissingValueFiles,
			Values: h.Values, SkipCRDs: h.SkipCrds, SkipTests: h.SkipTests, SkipSchemaValidation: h.SkipSchemaValidation}
		for _, p := range h.Parameters {
			hs.Parameters = append(hs.Parameters, render.HelmParameter{Name: p.Name, Value: p.Value, ForceString: p.ForceString})
		}
		for _, p := range h.FileParameters {
			hs.FileParameters = append(hs.FileParameters, render.HelmFileParameter{Name: p.Name, Path: p.Path})
		}
		if h.ValuesObject != nil && len(h.ValuesObject.Raw) > 0 {
			if err := json.Unmarshal(h.ValuesObject.Raw, &hs.ValuesObject); err != nil {
				return render.Input{}, fmt.Errorf("helm.valuesObject: %w", err)
			}
		}
		if h.Namespace != "" {
			in.Namespace = h.Namespace
		}
		if h.KubeVersion != "" {
			in.KubeVersion = h.KubeVersion
		}
		if len(h.APIVersions) > 0 {
			in.APIVersions = h.APIVersions
		}
		in.Helm = hs
	}
	if k := src.Kustomize; k != nil {
		ks := &render.KustomizeSource{NamePrefix: k.NamePrefix, NameSuffix: k.NameSuffix, Images: k.Images,
			CommonLabels: k.CommonLabels, CommonAnnotations: k.CommonAnnotations, Namespace: k.Namespace, Components: k.Components,
			ForceCommonLabels: k.ForceCommonLabels, ForceCommonAnnotations: k.ForceCommonAnnotations,
			LabelWithoutSelector: k.LabelWithoutSelector, IgnoreMissingComponents: k.IgnoreMissingComponents,
			LabelIncludeTemplates: k.LabelIncludeTemplates, CommonAnnotationsEnvsubst: k.CommonAnnotationsEnvsubst,
			Version: k.Version}
		for _, r := range k.Replicas {
			ks.Replicas = append(ks.Replicas, render.KustomizeReplica{Name: r.Name, Count: int64(r.Count.IntValue())})
		}
		for _, p := range k.Patches {
			kp := render.KustomizePatch{Path: p.Path, Patch: p.Patch, Options: p.Options}
			if t := p.Target; t != nil {
				kp.Target = &render.KustomizeSelector{Group: t.Group, Version: t.Version, Kind: t.Kind, Name: t.Name,
					Namespace: t.Namespace, LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector}
			}
			ks.Patches = append(ks.Patches, kp)
		}
		if k.KubeVersion != "" {
			in.KubeVersion = k.KubeVersion
		}
		if len(k.APIVersions) > 0 {
			in.APIVersions = k.APIVersions
		}
		in.Kustomize = ks
	}
	if p := src.Plugin; p != nil {
		ps := &render.PluginSource{Name: p.Name, Env: map[string]string{}}
		for _, e := range p.Env {
			ps.Env[e.Name] = e.Value
		}
		for _, prm := range p.Parameters {
			ps.Parameters = append(ps.Parameters, render.PluginParameter{Name: prm.Name, String: prm.String, Array: prm.Array, Map: prm.Map})
		}
		in.Plugin = ps
	}
	return in, nil
}

func jsonnetVars(vs []v1alpha1.JsonnetVar) []render.JsonnetVar {
	out := make([]render.JsonnetVar, len(vs))
	for i, v := range vs {
		out[i] = render.JsonnetVar{Name: v.Name, Value: v.Value, Code: v.Code}
	}
	return out
}
