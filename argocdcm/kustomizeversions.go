package argocdcm

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubegitops/gitops/render/kustomize"
)

// kustomizeBinaries collects Argo CD's named kustomize binaries from
// argocd-cm, as util/settings' GetKustomizeSettings reads them:
// kustomize.path.<name> (or its deprecated spelling kustomize.version.<name>)
// is the binary's path, kustomize.buildOptions.<name> its build options, and
// kustomize.buildOptions those of a version without options of its own.
type kustomizeBinaries struct {
	paths   map[string]string
	options map[string]string
	global  string
}

func newKustomizeBinaries() *kustomizeBinaries {
	return &kustomizeBinaries{paths: map[string]string{}, options: map[string]string{}}
}

// add registers the binary of key (kustomize.path.<name> or
// kustomize.version.<name>); a name given twice is an error, in Argo CD's
// words.
func (b *kustomizeBinaries) add(key, value string) error {
	name := strings.TrimPrefix(strings.TrimPrefix(key, "kustomize.version."), "kustomize.path.")
	if _, dup := b.paths[name]; dup {
		return fmt.Errorf("%w: found duplicate kustomize version: %s", ErrMalformed, name)
	}
	path := strings.TrimSpace(value)
	if path == "" {
		return fmt.Errorf("%w: kustomize version %s has no binary path", ErrMalformed, name)
	}
	b.paths[name] = path
	return nil
}

// resolve returns the binaries by name (the renderer's Versions), nil when
// none is registered.
func (b *kustomizeBinaries) resolve() map[string]kustomize.Binary {
	if len(b.paths) == 0 {
		return nil
	}
	out := make(map[string]kustomize.Binary, len(b.paths))
	for name, path := range b.paths {
		opts, ok := b.options[name]
		if !ok {
			opts = b.global
		}
		out[name] = kustomize.Binary{Path: path, BuildOptions: strings.Fields(opts)}
	}
	return out
}

// warnings name the build options of versions no binary is registered
// for: no app can use them.
func (b *kustomizeBinaries) warnings() []string {
	var out []string
	for name := range b.options {
		if _, ok := b.paths[name]; !ok {
			out = append(out, fmt.Sprintf("%s: kustomize.buildOptions.%s is used by no app: no kustomize.path.%s registers a binary", ConfigMapName, name, name))
		}
	}
	sort.Strings(out)
	return out
}
