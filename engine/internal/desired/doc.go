// Package desired builds an application's desired state: what its sources
// say the cluster should hold, at one revision of each.
//
// The story of a build (Builder.Build), source by source:
//
//  1. Sources picks the Source of each app source (a chart source for
//     spec.source.chart, else the host's SourceFor, else a local folder or
//     Git), resolves its targetRevision to a commit (unless the caller
//     resolved it already, as a refresh does to fingerprint its inputs) and
//     opens a snapshot of that commit. A hard refresh drops the resolve
//     caches first.
//  2. A source with ref NAME exposes its tree to the others' helm.valueFiles
//     as "$NAME/..." (refs.go); it is rendered itself only when it also has
//     a path or a chart.
//  3. Argo CD's parameter override files (.argocd-source.yaml and
//     .argocd-source-<app>.yaml) are merged onto the source
//     (sourceoverrides.go).
//  4. The source becomes the renderer's input (renderinput.go) with the
//     destination's kube version and API versions, and Argo CD's build
//     environment (ARGOCD_APP_*, KUBE_VERSION, ...) is substituted where
//     Argo CD substitutes it (buildenv.go). A chart's dependencies may come
//     only from the project's sourceRepos (chartdeps.go fetches them
//     through the same chart source and credentials).
//  5. The renderer renders, bounded by the render timeout
//     (rendertimeout.go), and strategic-merge directives are resolved.
//  6. Every object gets the namespace its scope calls for (scopes.go), and
//     objects of kinds the cache filter excludes are set apart
//     (exclusions.go): they are reported, never compared nor applied.
//
// The package knows nothing of the engine: a Builder is made of plain
// settings and collaborators (Config), and a destination is described by
// value (Destination).
package desired
