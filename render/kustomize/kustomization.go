package kustomize

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/render"
)

// readKustomization finds and parses the kustomization file of dir.
func readKustomization(root *render.Root, dir string) (string, *types.Kustomization, error) {
	for _, name := range render.KustomizationFileNames {
		p := path.Join(dir, name)
		data, err := root.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		k := &types.Kustomization{}
		if err := yaml.Unmarshal(data, k); err != nil {
			return "", nil, &render.PathError{Op: "parse", Path: p, Err: errors.New("not a kustomization")}
		}
		return p, k, nil
	}
	return "", nil, &render.PathError{Op: "open", Path: path.Join(dir, "kustomization.yaml"), Err: fs.ErrNotExist}
}

// checkRemote walks the kustomizations reachable from dir through local
// resources, bases and components, and refuses remote entries (and
// helmCharts) unless allowed, and KSOPS generators (checkKSOPS). It runs before krusty, which would otherwise
// clone or fetch during the build. With helm it returns the kustomization
// files that have helmCharts, to be inflated in process.
func checkRemote(root *render.Root, fsys *FileSystem, dir string, allowRemote, helm bool) ([]string, error) {
	var charted []string
	seen := map[string]bool{}
	var visit func(dir string) error
	visit = func(dir string) error {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		kfile, k, err := readKustomizationVia(fsys, root, dir)
		if err != nil {
			return err
		}
		if err := checkKSOPS(root, dir, k.Generators); err != nil {
			return err
		}
		if len(k.HelmChartInflationGenerator) > 0 {
			return &render.PathError{Op: "load", Path: kfile, Err: fmt.Errorf("%w: helmChartInflationGenerator (deprecated) is not supported; use helmCharts", render.ErrInvalidInput)}
		}
		if len(k.HelmCharts) > 0 {
			if !helm {
				return &render.PathError{Op: "load", Path: kfile, Err: fmt.Errorf("%w: helmCharts needs the in-process Helm (kustomize.Options.Helm)", render.ErrRemoteDisabled)}
			}
			charted = append(charted, kfile)
		}
		entries := append(append(append([]string{}, k.Resources...), k.Bases...), k.Components...)
		for _, e := range entries {
			if isRemote(e) {
				if allowRemote {
					continue
				}
				return &render.PathError{Op: "load", Path: kfile, Err: fmt.Errorf("%w: remote resource %q", render.ErrRemoteDisabled, e)}
			}
			sub := path.Join(dir, e)
			if strings.HasPrefix(e, "/") {
				sub = rel(e)
			}
			info, err := root.Stat(sub)
			if err != nil {
				return err
			}
			if info.IsDir() {
				if err := visit(sub); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := visit(dir)
	return charted, err
}

func readKustomizationVia(fsys *FileSystem, root *render.Root, dir string) (string, *types.Kustomization, error) {
	for _, name := range render.KustomizationFileNames {
		p := path.Join(dir, name)
		if !fsys.Exists(abs(p)) {
			continue
		}
		data, err := fsys.ReadFile(abs(p))
		if err != nil {
			return "", nil, err
		}
		k := &types.Kustomization{}
		if err := yaml.Unmarshal(data, k); err != nil {
			return "", nil, &render.PathError{Op: "parse", Path: p, Err: errors.New("not a kustomization")}
		}
		return p, k, nil
	}
	return readKustomization(root, dir)
}

// isRemote reports whether a kustomization entry names something kustomize
// would fetch: a URL, an scp-style git address, a go-getter style
// "host/repo//path", or a ref query.
func isRemote(e string) bool {
	switch {
	case render.URLScheme(e) != "":
		return true
	case strings.HasPrefix(e, "git@"), strings.HasPrefix(e, "git::"):
		return true
	case strings.Contains(e, "?ref="), strings.Contains(e, "?version="), strings.Contains(e, "?submodules="), strings.Contains(e, "?timeout="):
		return true
	case strings.Contains(e, "//"), strings.Contains(e, "_git/"):
		return true
	}
	first := strings.SplitN(e, "/", 2)[0]
	// github.com/org/repo, gitlab.example.com/...: a host as first element.
	return strings.Contains(first, ".") && first != "." && first != ".." && strings.Count(e, "/") >= 2
}
