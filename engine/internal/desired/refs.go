package desired

import (
	"fmt"
	pathpkg "path"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/source"
)

// withRefs mounts the trees of ref sources into snap for the value files
// of src that name them ("$values/envs/prod.yaml": the file envs/prod.yaml
// at the root of the source with ref values), and rewrites those value
// files to reach the mount from the chart's directory. A "$NAME" that no
// source defines, or a path that climbs out of the referenced tree, is an
// error naming the value file.
//
// The build environment is substituted in value file paths as Argo CD
// does: in a "$NAME/" path after the reference is resolved, in the others
// whole. A "$NAME/" that is neither a ref nor a build variable is an error
// naming the value file.
func withRefs(i int, src v1alpha1.ApplicationSource, snap source.Snapshot, refs map[string]source.Snapshot, env map[string]string) (source.Snapshot, v1alpha1.ApplicationSource, error) {
	if src.Helm == nil || len(src.Helm.ValueFiles) == 0 {
		return snap, src, nil
	}
	var mounts map[string]source.Snapshot
	files := make([]string, len(src.Helm.ValueFiles))
	up := upTo(src.Path)
	for j, vf := range src.Helm.ValueFiles {
		name, rest, _ := strings.Cut(vf, "/")
		ref, isRef := refs[name]
		if !isRef {
			if _, isVar := env[strings.Trim(strings.TrimPrefix(name, "$"), "{}")]; strings.HasPrefix(vf, "$") && !isVar && !strings.HasPrefix(vf, "$$") {
				return nil, src, fmt.Errorf("source %d: helm.valueFiles %q: no source has ref %q", i, vf, strings.TrimPrefix(name, "$"))
			}
			files[j] = envsubst(vf, env)
			continue
		}
		rest = envsubst(rest, env)
		clean := pathpkg.Clean("/" + rest)
		if rest == "" || clean == "/" || strings.Contains("/"+rest+"/", "/../") {
			return nil, src, fmt.Errorf("source %d: helm.valueFiles %q: %w", i, vf, render.ErrOutsideRoot)
		}
		if mounts == nil {
			mounts = map[string]source.Snapshot{}
		}
		mounts[name] = ref
		files[j] = up + name + clean
	}
	h := *src.Helm
	h.ValueFiles = files
	src.Helm = &h
	if mounts == nil {
		return snap, src, nil
	}
	return source.WithMounts(snap, mounts), src, nil
}

// upTo returns the "../" steps from a source's path to its tree's root.
func upTo(p string) string {
	p = strings.Trim(pathpkg.Clean("/"+p), "/")
	if p == "" {
		return ""
	}
	return strings.Repeat("../", strings.Count(p, "/")+1)
}
