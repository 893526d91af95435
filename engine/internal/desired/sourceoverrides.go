package desired

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/render"
	"sigs.k8s.io/yaml"
)

// maxOverrideFileBytes bounds a parameter override file read from a
// repository.
const maxOverrideFileBytes = 1 << 20

// withParameterOverrides applies Argo CD's parameter override files to
// src, as Argo CD's repo server does: .argocd-source.yaml and then
// .argocd-source-<app>.yaml in the app's path, each a YAML document shaped
// like an ApplicationSource (kustomize:, helm:, ...) merged onto the
// source as a JSON merge patch (RFC 7386: maps merge, lists and scalars
// replace). The image updater's git write-back writes the second file.
// A file that is not valid YAML, or that would change repoURL, path,
// targetRevision, chart or ref, is an error naming it.
func withParameterOverrides(app *v1alpha1.Application, src v1alpha1.ApplicationSource, fsys fs.FS) (v1alpha1.ApplicationSource, error) {
	if v1alpha1.IsAbsolutePath(src.Path) {
		return src, nil // renderInput refuses the path itself
	}
	dir := strings.TrimRight(src.Path, "/")
	if dir == "" {
		dir = "."
	}
	// The files are read through a render.Root, as the renderers read:
	// a path or link that leaves the tree is a *render.PathError wrapping
	// render.ErrOutsideRoot (fs.FS itself answers "invalid argument").
	root := render.NewRoot(fsys, render.Limits{MaxFileBytes: maxOverrideFileBytes})
	for _, name := range []string{".argocd-source.yaml", ".argocd-source-" + app.Name + ".yaml"} {
		p := path.Join(dir, name)
		raw, err := root.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return src, fmt.Errorf("parameter override file: %w", err)
		}
		patch, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return src, fmt.Errorf("parameter override file %s is not valid YAML: %w", p, err)
		}
		if string(patch) == "null" {
			continue
		}
		cur, err := json.Marshal(src)
		if err != nil {
			return src, err
		}
		merged, err := jsonpatch.MergePatch(cur, patch)
		if err != nil {
			return src, fmt.Errorf("parameter override file %s: %w", p, err)
		}
		var next v1alpha1.ApplicationSource
		if err := json.Unmarshal(merged, &next); err != nil {
			return src, fmt.Errorf("parameter override file %s does not describe a source: %w", p, err)
		}
		if next.RepoURL != src.RepoURL || next.Path != src.Path || next.TargetRevision != src.TargetRevision || next.Chart != src.Chart || next.Ref != src.Ref {
			return src, fmt.Errorf("parameter override file %s may not change repoURL, path, targetRevision, chart or ref", p)
		}
		src = next
	}
	return src, nil
}
