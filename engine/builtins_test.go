package engine

import "github.com/kubegitops/gitops/render/builtin"

// newWithBuiltins is New with every built-in renderer when opts has no
// Toolkit, as the root package's New: most tests render Helm, Kustomize
// or Jsonnet apps.
func newWithBuiltins(opts Options) (*Engine, error) {
	if opts.Toolkit == nil {
		opts.Toolkit = builtin.Tools
	}
	return New(opts)
}
