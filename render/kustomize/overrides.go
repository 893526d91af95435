package kustomize

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/render"
)

// applyOverrides applies Argo CD's overrides to k, as the `kustomize edit`
// commands Argo CD runs would, and returns the new kustomization file.
//
//   - namePrefix, nameSuffix, namespace: set (replacing);
//   - images: `edit set image` semantics, an entry with the same name is
//     replaced, else one is appended;
//   - commonLabels: merged into the file's commonLabels when it has some
//     (kustomize applies them last), else added as a last labels entry with
//     includeSelectors (the same transformation, without kustomize's
//     deprecation warning); either way the override wins;
//   - commonAnnotations: merged, the override winning;
//   - replicas: an entry with the same name is replaced, else appended;
//   - patches and components: appended; component paths must stay inside
//     the root.
func applyOverrides(root *render.Root, dir, kfile string, k *types.Kustomization, o render.KustomizeSource) ([]byte, error) {
	if o.NamePrefix != "" {
		k.NamePrefix = o.NamePrefix
	}
	if o.NameSuffix != "" {
		k.NameSuffix = o.NameSuffix
	}
	if o.Namespace != "" {
		k.Namespace = o.Namespace
	}
	for _, spec := range o.Images {
		img, err := parseImage(spec)
		if err != nil {
			return nil, err
		}
		replaced := false
		for i := range k.Images {
			if k.Images[i].Name == img.Name {
				k.Images[i] = img
				replaced = true
			}
		}
		if !replaced {
			k.Images = append(k.Images, img)
		}
	}
	switch {
	case len(o.CommonLabels) == 0:
	case len(k.CommonLabels) > 0:
		// Kustomize applies commonLabels after labels: merge there to win.
		k.CommonLabels = mergeStrings(k.CommonLabels, o.CommonLabels)
	default:
		// Argo CD's `edit add label` writes commonLabels, which kustomize
		// reports as deprecated on the process's stderr; a last labels
		// entry with includeSelectors is the same transformation.
		k.Labels = append(k.Labels, types.Label{Pairs: mergeStrings(nil, o.CommonLabels), IncludeSelectors: true})
	}
	k.CommonAnnotations = mergeStrings(k.CommonAnnotations, o.CommonAnnotations)
	for _, r := range o.Replicas {
		rep := types.Replica{Name: r.Name, Count: r.Count}
		replaced := false
		for i := range k.Replicas {
			if k.Replicas[i].Name == r.Name {
				k.Replicas[i] = rep
				replaced = true
			}
		}
		if !replaced {
			k.Replicas = append(k.Replicas, rep)
		}
	}
	for _, p := range o.Patches {
		patch := types.Patch{Path: p.Path, Patch: p.Patch}
		if p.Path != "" {
			if _, err := root.Sub(dir, p.Path); err != nil {
				return nil, err
			}
		}
		if t := p.Target; t != nil {
			patch.Target = &types.Selector{
				ResId:              resIDOf(t),
				LabelSelector:      t.LabelSelector,
				AnnotationSelector: t.AnnotationSelector,
			}
		}
		k.Patches = append(k.Patches, patch)
	}
	for _, c := range o.Components {
		if _, err := root.Sub(dir, c); err != nil {
			return nil, err
		}
		k.Components = append(k.Components, c)
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return nil, fmt.Errorf("%s: encode with overrides: %w", kfile, err)
	}
	return data, nil
}

func mergeStrings(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k] = b[k]
	}
	return out
}

// parseImage reads an image override as `kustomize edit set image` does:
// "name=newName:tag", "name=newName@digest", "name:tag", "name@digest",
// "name=newName".
func parseImage(spec string) (types.Image, error) {
	if spec == "" {
		return types.Image{}, fmt.Errorf("%w: empty image override", render.ErrInvalidInput)
	}
	name, target, hasNew := strings.Cut(spec, "=")
	if !hasNew {
		target = spec
	}
	ref, digest, hasDigest := strings.Cut(target, "@")
	tag := ""
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref, tag = ref[:i], ref[i+1:]
	}
	img := types.Image{NewTag: tag}
	if hasDigest {
		img.Digest = digest
	}
	if hasNew {
		img.Name = name
		if ref != name {
			img.NewName = ref
		}
	} else {
		img.Name = ref
	}
	if img.Name == "" {
		return types.Image{}, fmt.Errorf("%w: image override %q has no name", render.ErrInvalidInput, spec)
	}
	return img, nil
}

func resIDOf(t *render.KustomizeSelector) resid.ResId {
	return resid.ResId{
		Gvk:       resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind},
		Name:      t.Name,
		Namespace: t.Namespace,
	}
}
