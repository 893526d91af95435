package engine

import (
	"github.com/kubegitops/gitops/render/builtin"
	"github.com/kubegitops/gitops/source/helmrepo"
	"github.com/kubegitops/gitops/source/oci"
)

// newWithBuiltins is New with the batteries the root package's New plugs
// in where opts has none (every built-in renderer, a source/helmrepo chart
// source): most tests render Helm, Kustomize or Jsonnet apps, and some
// read charts.
func newWithBuiltins(opts Options) (*Engine, error) {
	if opts.Toolkit == nil {
		opts.Toolkit = builtin.Tools
	}
	if opts.ChartSource == nil && opts.NewChartSource == nil {
		opts.NewChartSource = helmrepo.ChartSource
	}
	if opts.NewOCISource == nil {
		opts.NewOCISource = oci.NewSource
	}
	return New(opts)
}
