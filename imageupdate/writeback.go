package imageupdate

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/util"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FileEdit is one file the git write-back changes.
type FileEdit struct {
	// Path from the repository root, slash-separated.
	Path string
	// Before is the file's content (nil when the file is created); After
	// its new content.
	Before, After []byte
}

// overrideFileName is Argo CD's per-app parameter override file.
func overrideFileName(app string) string { return ".argocd-source-" + app + ".yaml" }

// planEdits computes, without writing anything, the file edits that record
// changes in the repository checked out in fsys. Rules:
//   - no write-back-target: <app path>/.argocd-source-<app>.yaml gets the
//     override merged into its kustomize.images or helm.parameters, after
//     the spec's own entries (App.SpecOverride), since the file's lists
//     replace the spec's (the file is created when missing).
//   - kustomization[:path]: the kustomization (kustomization.yaml,
//     kustomization.yml or Kustomization) in the app's path, or in path,
//     gets images: entries keyed by the kustomize image name (newName when
//     it differs, newTag, digest). The kustomization must exist.
//   - helmvalues[:path]: the values file (default values.yaml in the app's
//     path) gets the Helm value paths set. The file must exist.
//
// A path starting with "/" is from the repository root, else from the
// app's path; it may not leave the repository. Edits whose content would
// not change are left out.
func planEdits(fsys billy.Filesystem, app App, cfg Config, images []Image, changes []Change) ([]FileEdit, error) {
	var edit FileEdit
	var err error
	switch cfg.Target {
	case "":
		edit, err = editOverrideFile(fsys, app, images, changes)
	case "kustomization":
		edit, err = editKustomization(fsys, app, cfg.TargetPath, images, changes)
	case "helmvalues":
		edit, err = editHelmValues(fsys, app, cfg.TargetPath, images, changes)
	}
	if err != nil {
		return nil, err
	}
	if bytes.Equal(edit.Before, edit.After) {
		return nil, nil
	}
	return []FileEdit{edit}, nil
}

// resolvePath joins p to the app's path (or the root for "/p").
func resolvePath(appPath, p string) (string, error) {
	var full string
	if strings.HasPrefix(p, "/") {
		full = path.Clean(strings.TrimPrefix(p, "/"))
	} else {
		full = path.Join(appPath, p)
	}
	if full == ".." || strings.HasPrefix(full, "../") || path.IsAbs(full) {
		return "", errorf(ErrWriteBackTarget, "%q leaves the repository", p)
	}
	if full == "" {
		full = "."
	}
	return full, nil
}

func readExisting(fsys billy.Filesystem, p string) ([]byte, error) {
	b, err := util.ReadFile(fsys, p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
		return nil, errorf(ErrWriteBackTarget, "%s does not exist in the repository", p)
	}
	if err != nil {
		return nil, errorf(ErrWriteBackTarget, "%s: %v", p, err)
	}
	return b, nil
}

func parseYAML(p string, b []byte) (*yaml.RNode, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return yaml.NewMapRNode(nil), nil
	}
	rn, err := yaml.Parse(string(b))
	if err != nil {
		return nil, errorf(ErrWriteBackTarget, "%s is not valid YAML: %v", p, err)
	}
	if rn.YNode().Kind != yaml.MappingNode {
		return nil, errorf(ErrWriteBackTarget, "%s is not a YAML mapping", p)
	}
	return rn, nil
}

func editKustomization(fsys billy.Filesystem, app App, target string, images []Image, changes []Change) (FileEdit, error) {
	dir, err := resolvePath(app.Path, target)
	if err != nil {
		return FileEdit{}, err
	}
	var file string
	var before []byte
	for _, n := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		p := path.Join(dir, n)
		if b, err := util.ReadFile(fsys, p); err == nil {
			file, before = p, b
			break
		}
	}
	if file == "" {
		return FileEdit{}, errorf(ErrWriteBackTarget, "no kustomization.yaml, kustomization.yml or Kustomization in %s", dir)
	}
	rn, err := parseYAML(file, before)
	if err != nil {
		return FileEdit{}, err
	}
	seq, err := rn.Pipe(yaml.LookupCreate(yaml.SequenceNode, "images"))
	if err != nil {
		return FileEdit{}, errorf(ErrWriteBackTarget, "%s: images: %v", file, err)
	}
	for i, c := range changes {
		img := images[i]
		key := img.KustomizeImageName
		var entry *yaml.RNode
		els, err := seq.Elements()
		if err != nil {
			return FileEdit{}, errorf(ErrWriteBackTarget, "%s: images is not a list", file)
		}
		for _, el := range els {
			if n, _ := el.GetString("name"); n == key {
				entry = el
			}
		}
		if entry == nil {
			entry = yaml.NewMapRNode(&map[string]string{"name": key})
			seq.YNode().Content = append(seq.YNode().Content, entry.YNode())
		}
		fields := [][2]string{{"newTag", c.NewTag}}
		if img.Repository != key {
			fields = append(fields, [2]string{"newName", img.Repository})
		}
		if c.NewDigest != "" {
			fields = append(fields, [2]string{"digest", c.NewDigest})
		} else {
			_ = entry.PipeE(yaml.Clear("digest"))
		}
		for _, f := range fields {
			if err := entry.PipeE(yaml.SetField(f[0], yaml.NewStringRNode(f[1]))); err != nil {
				return FileEdit{}, errorf(ErrWriteBackTarget, "%s: %v", file, err)
			}
		}
	}
	out, err := rn.String()
	if err != nil {
		return FileEdit{}, errorf(ErrWriteBackTarget, "%s: %v", file, err)
	}
	return FileEdit{Path: file, Before: before, After: []byte(out)}, nil
}

func editHelmValues(fsys billy.Filesystem, app App, target string, images []Image, changes []Change) (FileEdit, error) {
	if target == "" {
		target = "values.yaml"
	}
	file, err := resolvePath(app.Path, target)
	if err != nil {
		return FileEdit{}, err
	}
	before, err := readExisting(fsys, file)
	if err != nil {
		return FileEdit{}, err
	}
	rn, err := parseYAML(file, before)
	if err != nil {
		return FileEdit{}, err
	}
	for i, c := range changes {
		for _, p := range helmParams(images[i], c) {
			if err := setDotted(rn, p.Name, p.Value); err != nil {
				return FileEdit{}, errorf(ErrWriteBackTarget, "%s: %s: %v", file, p.Name, err)
			}
		}
	}
	out, err := rn.String()
	if err != nil {
		return FileEdit{}, errorf(ErrWriteBackTarget, "%s: %v", file, err)
	}
	return FileEdit{Path: file, Before: before, After: []byte(out)}, nil
}

// setDotted sets a string at a dotted path ("image.tag"), creating the
// maps on the way.
func setDotted(rn *yaml.RNode, dotted, value string) error {
	parts := strings.Split(dotted, ".")
	for _, p := range parts {
		if p == "" {
			return errors.New("empty path element")
		}
	}
	parent, err := rn.Pipe(yaml.LookupCreate(yaml.MappingNode, parts[:len(parts)-1]...))
	if err != nil {
		return err
	}
	if parent == nil || parent.YNode().Kind != yaml.MappingNode {
		return errors.New("a value on the path is not a mapping")
	}
	return parent.PipeE(yaml.SetField(parts[len(parts)-1], yaml.NewStringRNode(value)))
}

// overrideFile is the layout of .argocd-source-<app>.yaml.
type overrideFile struct {
	Kustomize *struct {
		Images []string `json:"images,omitempty" yaml:"images,omitempty"`
	} `json:"kustomize,omitempty" yaml:"kustomize,omitempty"`
	Helm *struct {
		Parameters []overrideParam `json:"parameters,omitempty" yaml:"parameters,omitempty"`
	} `json:"helm,omitempty" yaml:"helm,omitempty"`
}

type overrideParam struct {
	Name        string `json:"name" yaml:"name"`
	Value       string `json:"value" yaml:"value"`
	ForceString bool   `json:"forcestring,omitempty" yaml:"forcestring,omitempty"`
}

func editOverrideFile(fsys billy.Filesystem, app App, images []Image, changes []Change) (FileEdit, error) {
	file, err := resolvePath(app.Path, overrideFileName(app.Name))
	if err != nil {
		return FileEdit{}, err
	}
	if _, err := fsys.Stat(path.Dir(file)); err != nil {
		return FileEdit{}, errorf(ErrWriteBackTarget, "the application's path %s does not exist in the repository", path.Dir(file))
	}
	before, err := util.ReadFile(fsys, file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return FileEdit{}, errorf(ErrWriteBackTarget, "%s: %v", file, err)
	}
	var cur overrideFile
	if len(bytes.TrimSpace(before)) > 0 {
		if err := yaml.Unmarshal(before, &cur); err != nil {
			return FileEdit{}, errorf(ErrWriteBackTarget, "%s is not a valid parameter override file: %v", file, err)
		}
	}
	ov, err := overrideFor(app.SourceType, images, changes)
	if err != nil {
		return FileEdit{}, err
	}
	base := Override{}
	if cur.Kustomize != nil {
		base.KustomizeImages = cur.Kustomize.Images
	}
	if cur.Helm != nil {
		for _, p := range cur.Helm.Parameters {
			base.HelmParameters = append(base.HelmParameters, HelmParameter(p))
		}
	}
	// The spec's entries first, then the file's, then the new ones: the
	// file replaces the spec's lists when the engine merges it.
	merged := ov.Merge(base.Merge(app.SpecOverride))
	if len(merged.KustomizeImages) > 0 {
		if cur.Kustomize == nil {
			cur.Kustomize = &struct {
				Images []string `json:"images,omitempty" yaml:"images,omitempty"`
			}{}
		}
		cur.Kustomize.Images = merged.KustomizeImages
	}
	if len(merged.HelmParameters) > 0 {
		if cur.Helm == nil {
			cur.Helm = &struct {
				Parameters []overrideParam `json:"parameters,omitempty" yaml:"parameters,omitempty"`
			}{}
		}
		cur.Helm.Parameters = nil
		for _, p := range merged.HelmParameters {
			cur.Helm.Parameters = append(cur.Helm.Parameters, overrideParam(p))
		}
	}
	out, err := yaml.Marshal(cur)
	if err != nil {
		return FileEdit{}, errorf(ErrWriteBackTarget, "%s: %v", file, err)
	}
	return FileEdit{Path: file, Before: before, After: out}, nil
}
