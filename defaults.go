package gitops

import (
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/render/builtin"
	"github.com/kubegitops/gitops/source/helmrepo"
	"github.com/kubegitops/gitops/source/oci"
)

// New returns an engine for opts with the batteries package engine leaves
// out, where opts has none of its own: every built-in renderer
// (render/builtin.Tools) when opts.Toolkit is nil, and a source/helmrepo
// chart source (helmrepo.ChartSource) when opts.ChartSource and
// opts.NewChartSource are nil, and a source/oci artifact source
// (oci.NewSource) when opts.NewOCISource is nil. It is engine.New otherwise; see there for
// what it checks and starts.
func New(opts Options) (*Engine, error) {
	return engine.New(withBatteries(opts))
}

// DefaultOptions returns engine.DefaultOptions with the batteries New
// plugs in: every built-in renderer as the Toolkit, a source/helmrepo
// chart source as NewChartSource and a source/oci artifact source as
// NewOCISource.
func DefaultOptions() Options {
	return withBatteries(engine.DefaultOptions())
}

// withBatteries fills what opts leaves empty of the batteries.
func withBatteries(opts Options) Options {
	if opts.Toolkit == nil {
		opts.Toolkit = builtin.Tools
	}
	if opts.ChartSource == nil && opts.NewChartSource == nil {
		opts.NewChartSource = helmrepo.ChartSource
	}
	if opts.NewOCISource == nil {
		opts.NewOCISource = oci.NewSource
	}
	return opts
}
