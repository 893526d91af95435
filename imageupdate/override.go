package imageupdate

import (
	"sort"
	"strings"
)

// HelmParameter is a Helm --set value of an override.
type HelmParameter struct {
	// Name is the Helm value's path and Value the value set.
	Name, Value string
	// ForceString is always true for image values, as Argo CD Image
	// Updater writes them (a tag like 1.10 must stay a string).
	ForceString bool
}

// Override is a parameter override of an Application's source, what the
// argocd write-back holds for the app and what the
// .argocd-source-<app>.yaml file carries.
type Override struct {
	// KustomizeImages are kustomize image overrides
	// ("[name=]newName:tag[@digest]").
	KustomizeImages []string
	// HelmParameters are Helm parameters, by name.
	HelmParameters []HelmParameter
}

// Default Helm value paths, as Argo CD Image Updater uses them.
const (
	DefaultHelmImageName = "image.name"
	DefaultHelmImageTag  = "image.tag"
)

// imageRef is repository:tag[@digest].
func (c Change) imageRef() string {
	return c.Repository + ":" + c.tagValue()
}

// tagValue is what a tag value holds: tag, or tag@digest for the digest
// strategy.
func (c Change) tagValue() string {
	if c.NewDigest != "" {
		return c.NewTag + "@" + c.NewDigest
	}
	return c.NewTag
}

// kustomizeSpec is the kustomize image override of c.
func kustomizeSpec(img Image, c Change) string {
	if img.KustomizeImageName != "" && img.KustomizeImageName != img.Repository {
		return img.KustomizeImageName + "=" + c.imageRef()
	}
	return c.imageRef()
}

// helmParams are the Helm parameters of c: helm.image-spec alone when set,
// else helm.image-name (default image.name) and helm.image-tag (default
// image.tag).
func helmParams(img Image, c Change) []HelmParameter {
	if img.HelmImageSpec != "" {
		return []HelmParameter{{Name: img.HelmImageSpec, Value: c.imageRef(), ForceString: true}}
	}
	n, t := img.HelmImageName, img.HelmImageTag
	if n == "" {
		n = DefaultHelmImageName
	}
	if t == "" {
		t = DefaultHelmImageTag
	}
	return []HelmParameter{{Name: n, Value: c.Repository, ForceString: true}, {Name: t, Value: c.tagValue(), ForceString: true}}
}

// overrideFor builds the override for changes (images[i] made changes[i]).
func overrideFor(st SourceType, images []Image, changes []Change) (Override, error) {
	var ov Override
	for i, c := range changes {
		switch st {
		case SourceKustomize:
			ov.KustomizeImages = append(ov.KustomizeImages, kustomizeSpec(images[i], c))
		case SourceHelm:
			ov.HelmParameters = append(ov.HelmParameters, helmParams(images[i], c)...)
		default:
			return Override{}, errorf(ErrWriteBackTarget, "source type %q: images can be written only for Kustomize and Helm applications", st)
		}
	}
	return ov, nil
}

// Merge returns base with o's entries replacing those of the same image
// name (Kustomize) or parameter name (Helm); the rest of base is kept.
// Entries are sorted by name so that equal overrides are equal values.
func (o Override) Merge(base Override) Override {
	imgs := map[string]string{}
	for _, s := range append(append([]string{}, base.KustomizeImages...), o.KustomizeImages...) {
		imgs[kustomizeKey(s)] = s
	}
	params := map[string]HelmParameter{}
	for _, p := range append(append([]HelmParameter{}, base.HelmParameters...), o.HelmParameters...) {
		params[p.Name] = p
	}
	var out Override
	for _, s := range imgs {
		out.KustomizeImages = append(out.KustomizeImages, s)
	}
	for _, p := range params {
		out.HelmParameters = append(out.HelmParameters, p)
	}
	sort.Slice(out.KustomizeImages, func(i, j int) bool {
		return kustomizeKey(out.KustomizeImages[i]) < kustomizeKey(out.KustomizeImages[j])
	})
	sort.Slice(out.HelmParameters, func(i, j int) bool { return out.HelmParameters[i].Name < out.HelmParameters[j].Name })
	return out
}

// kustomizeKey is the image name a kustomize override replaces.
func kustomizeKey(spec string) string {
	if n, _, ok := strings.Cut(spec, "="); ok {
		return n
	}
	ref, _, _ := cutDigest(spec)
	if i := lastColon(ref); i >= 0 {
		return ref[:i]
	}
	return ref
}
