// Package builtin wires every renderer this module ships into one
// render.Tools: plain manifests, Kustomize (with its helmCharts rendered by
// the Helm renderer), Helm, Jsonnet and config-management plugins.
//
// It is the engine's default toolkit: the root package's New and
// DefaultOptions set engine.Options.Toolkit to Tools. Package engine never
// imports it, so a host that builds the engine from package engine with a
// toolkit of its own (or none: plain manifests only) does not compile
// Helm, Kustomize or Jsonnet.
package builtin

import (
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/helm"
	"github.com/kubegitops/gitops/render/jsonnet"
	"github.com/kubegitops/gitops/render/kustomize"
	"github.com/kubegitops/gitops/render/plain"
	"github.com/kubegitops/gitops/render/plugin"
)

// Tools returns every built-in renderer, each with its package defaults.
// deps fetches the chart dependencies a chart's charts/ lacks (nil: the
// Helm renderer's own fetching rules apply); Kustomize's helmCharts render
// through the same Helm renderer, so they obey the same fetcher.
func Tools(deps render.DependencyFetcher) render.Tools {
	return ToolsWith(DefaultOptions())(deps)
}

// Options are the options of each built-in renderer.
type Options struct {
	// Plain are the plain directory renderer's options.
	Plain plain.Options
	// Kustomize are the Kustomize renderer's options.
	Kustomize kustomize.Options
	// Helm are the Helm renderer's options.
	Helm helm.Options
	// Jsonnet are the Jsonnet renderer's options.
	Jsonnet jsonnet.Options
	// Plugin are the config management plugin renderer's options.
	Plugin plugin.Options
}

// DefaultOptions returns each renderer's package defaults.
func DefaultOptions() Options {
	return Options{Plain: plain.DefaultOptions(), Kustomize: kustomize.DefaultOptions(), Helm: helm.DefaultOptions(),
		Jsonnet: jsonnet.DefaultOptions(), Plugin: plugin.DefaultOptions()}
}

// ToolsWith returns a toolkit (engine.Options.Toolkit) of every built-in
// renderer with o's options: Tools with settings of the host's (argocdcm
// sets Argo CD's kustomize.buildOptions and helm.valuesFileSchemes so).
// deps replaces o.Helm.Dependencies, and the Kustomize renderer inflates
// helmCharts with the Helm renderer, as in Tools.
func ToolsWith(o Options) func(deps render.DependencyFetcher) render.Tools {
	return func(deps render.DependencyFetcher) render.Tools {
		hopts := o.Helm
		hopts.Dependencies = deps
		h := helm.New(hopts)
		kopts := o.Kustomize
		kopts.Helm = h
		return render.Tools{
			render.KindPlain:     plain.New(o.Plain),
			render.KindKustomize: kustomize.New(kopts),
			render.KindHelm:      h,
			render.KindJsonnet:   jsonnet.New(o.Jsonnet),
			render.KindPlugin:    plugin.New(o.Plugin),
		}
	}
}
