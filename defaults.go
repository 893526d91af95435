package gitops

import (
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/render/builtin"
)

// New returns an engine for opts, with every built-in renderer
// (render/builtin.Tools) when opts.Toolkit is nil. It is engine.New
// otherwise; see there for what it checks and starts.
func New(opts Options) (*Engine, error) {
	if opts.Toolkit == nil {
		opts.Toolkit = builtin.Tools
	}
	return engine.New(opts)
}

// DefaultOptions returns engine.DefaultOptions with every built-in
// renderer as the Toolkit.
func DefaultOptions() Options {
	opts := engine.DefaultOptions()
	opts.Toolkit = builtin.Tools
	return opts
}
