package kustomize

import (
	"errors"
	"fmt"
	"io/fs"
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
//   - patches (with their options) and components: appended; component
//     paths must stay inside the root, and with IgnoreMissingComponents a
//     component that does not exist is skipped;
//   - a commonLabels or commonAnnotations key the kustomization already
//     sets to another value is an error unless ForceCommonLabels /
//     ForceCommonAnnotations (Argo CD's `edit add label` without --force
//     refuses it); LabelWithoutSelector adds the labels without selectors
//     (nor templates, unless LabelIncludeTemplates; LabelIncludeTemplates
//     without LabelWithoutSelector is an error, as for the edit command).
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
	if !o.ForceCommonLabels {
		if key := firstShared(k.CommonLabels, o.CommonLabels); key != "" {
			return nil, fmt.Errorf("%w: %s: commonLabels %q is already set by the kustomization (set kustomize.forceCommonLabels to replace it)", render.ErrInvalidInput, kfile, key)
		}
	}
	if !o.ForceCommonAnnotations {
		if key := firstShared(k.CommonAnnotations, o.CommonAnnotations); key != "" {
			return nil, fmt.Errorf("%w: %s: commonAnnotations %q is already set by the kustomization (set kustomize.forceCommonAnnotations to replace it)", render.ErrInvalidInput, kfile, key)
		}
	}
	if len(o.CommonLabels) > 0 && o.LabelIncludeTemplates && !o.LabelWithoutSelector {
		return nil, fmt.Errorf("%w: %s: kustomize.labelIncludeTemplates needs kustomize.labelWithoutSelector (kustomize edit add label refuses --include-templates without --without-selector)", render.ErrInvalidInput, kfile)
	}
	switch {
	case len(o.CommonLabels) == 0:
	case o.LabelWithoutSelector:
		// `edit add label --without-selector [--include-templates]`:
		// selectors stay as they are; templates get the labels only with
		// LabelIncludeTemplates.
		k.Labels = append(k.Labels, types.Label{Pairs: mergeStrings(nil, o.CommonLabels), IncludeTemplates: o.LabelIncludeTemplates})
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
		if len(p.Options) > 0 {
			patch.Options = &types.PatchArgs{}
			for opt, on := range p.Options {
				switch opt {
				case "allowNameChange":
					patch.Options.AllowNameChange = on
				case "allowKindChange":
					patch.Options.AllowKindChange = on
				default:
					return nil, fmt.Errorf("%w: %s: patch option %q (want allowNameChange or allowKindChange)", render.ErrInvalidInput, kfile, opt)
				}
			}
		}
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
		full, err := root.Sub(dir, c)
		if err != nil {
			return nil, err
		}
		if o.IgnoreMissingComponents {
			if _, err := root.Stat(full); errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		k.Components = append(k.Components, c)
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return nil, fmt.Errorf("%s: encode with overrides: %w", kfile, err)
	}
	return data, nil
}

// firstShared returns the first key (in order) that both maps set to
// different values, or "".
func firstShared(have, add map[string]string) string {
	keys := make([]string, 0, len(add))
	for k := range add {
		if v, ok := have[k]; ok && v != add[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
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
