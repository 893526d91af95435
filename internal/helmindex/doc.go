// Package helmindex is the one home of what this module knows about a Helm
// chart repository's index.yaml: parsing it (Parse, strict and bounded, as
// Helm's repo.LoadIndexFile reads it), choosing a version the way Helm does
// (Select, Index.Get, SortVersions for OCI tags) and resolving a chart's
// URL against the repository's (ResolveReferenceURL, IndexURL).
//
// It exists so that source/helmrepo and render/helm read chart
// repositories alike without importing helm.sh/helm/v3/pkg/repo, whose
// getters and CLI settings cost every host hundreds of packages.
package helmindex
