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
	hopts := helm.DefaultOptions()
	hopts.Dependencies = deps
	h := helm.New(hopts)
	kopts := kustomize.DefaultOptions()
	kopts.Helm = h
	return render.Tools{
		render.KindPlain:     plain.New(plain.DefaultOptions()),
		render.KindKustomize: kustomize.New(kopts),
		render.KindHelm:      h,
		render.KindJsonnet:   jsonnet.New(jsonnet.DefaultOptions()),
		render.KindPlugin:    plugin.New(plugin.DefaultOptions()),
	}
}
