// Package kustomize renders Kustomize applications in-process with
// sigs.k8s.io/kustomize/api/krusty, on the application's tree, read-only,
// with no kustomize or git binary.
//
// Krusty reads through FileSystem, an implementation of kustomize's
// filesys.FileSystem over a render.Root: the tree appears at "/", writes
// fail, and every path (bases, components, patches, generators' files) is
// resolved inside the root, so ".." past the top and symbolic links that
// leave the tree fail with the render package's typed errors. On top of
// that, Options.LoadRestrictions (default root-only) confines the files a
// kustomization loads to its own directory, as `kustomize build` does.
//
// Remote resources and bases (git URLs, http(s) files) are refused before
// krusty runs, with render.ErrRemoteDisabled naming the kustomization and
// the entry, unless Options.AllowRemoteResources is set; then krusty fetches
// http(s) files and clones git bases (with the git binary) into temporary
// directories, each read through its own Root and removed afterwards.
// Plugins are disabled; a KSOPS generator (generators: naming a file of
// kind ksops) is refused before krusty runs with a *KSOPSError naming the
// generator file and saying to list its SOPS files as resources instead
// (render.Decrypting decrypts them as krusty reads them).
//
// helmCharts are inflated in process when Options.Helm is set (the engine
// sets it), as `kustomize build --enable-helm` does with a helm binary:
// each entry's chart is taken from chartHome (default "charts" beside the
// kustomization; <name>-<version>/<name> when repo and version are set),
// else fetched through the Helm renderer's FetchChart (the engine's chart
// source, with the app project's sourceRepos as the admitted
// repositories). Values are built as kustomize builds them (the valuesFile
// or the chart's values.yaml, merged with valuesInline by valuesMerge,
// then additionalValuesFiles as further -f files), the chart is templated
// by render/helm, and its output is given to krusty as a resource of the
// kustomization, marked as Helm's output so that the namespace transformer
// leaves it alone. TestHelmChartsMatchKustomizeEnableHelm compares the
// result with kustomize 5.8.2 and helm 3.22.0. Without Options.Helm,
// helmCharts fail with render.ErrRemoteDisabled.
//
// Argo CD's overrides (render.KustomizeSource: namePrefix, nameSuffix,
// images, commonLabels, commonAnnotations, namespace, replicas, patches,
// components) are applied as Argo's `kustomize edit` commands would, to an
// in-memory copy of the application's kustomization file.
//
// An app whose kustomize.version names a binary of Options.Versions (Argo
// CD's argocd-cm kustomize.path.<name>) is built by that program instead,
// as Argo CD's repo server builds it: the tree is copied to a private
// directory (through the Root, so budgets and link checks apply), the
// overrides are written into the copy's kustomization file, and
// `<binary> build <path> <build options>` runs from the copy's root with a
// fresh environment (PATH, HOME, TMPDIR and Argo CD's build environment,
// never the host's), bounded by Options.BinaryTimeout and
// Options.MaxBinaryOutputBytes. Remote entries are checked as for the
// in-process build. A name no binary is registered for is a
// *VersionNotRegisteredError with Argo CD's text.
//
// Kustomize keeps its OpenAPI schema in process-wide variables, which
// krusty resets at every build. A build whose kustomization selects a
// schema (the openapi field) therefore runs alone, under the write side of
// a process-wide lock, and restores the default schema afterwards; every
// other build takes the read side and runs in parallel (see
// BenchmarkParallelBuilds for the gain over one global mutex).
package kustomize
