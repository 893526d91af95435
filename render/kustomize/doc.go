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
// Plugins are disabled, and helmCharts is
// refused (kustomize would exec a helm binary; render Helm charts with
// render/helm instead).
//
// Argo CD's overrides (render.KustomizeSource: namePrefix, nameSuffix,
// images, commonLabels, commonAnnotations, namespace, replicas, patches,
// components) are applied as Argo's `kustomize edit` commands would, to an
// in-memory copy of the application's kustomization file.
//
// Kustomize keeps its OpenAPI schema in process-wide variables, which
// krusty resets at every build. A build whose kustomization selects a
// schema (the openapi field) therefore runs alone, under the write side of
// a process-wide lock, and restores the default schema afterwards; every
// other build takes the read side and runs in parallel (see
// BenchmarkParallelBuilds for the gain over one global mutex).
package kustomize
