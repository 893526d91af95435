// Package gitops is an embeddable GitOps engine: it reads the desired state
// of Kubernetes applications from Git, Helm repositories and OCI
// registries, renders it (plain YAML and JSON, Kustomize, Helm, Jsonnet),
// watches the live state of one or many clusters, compares the two, syncs
// the difference in waves with hooks and a safe prune, and judges health,
// as Argo CD's application controller and repo server do.
//
// This package is the front door, as controller-runtime's root package is
// over its parts: alias.go names the engine's front door (the names a host
// needs to load apps, build an engine, run it and ask it for a sync or a
// delete; internal/aliasgen's FrontDoor lists them), and everything else
// of package engine (the core, where each name is documented in full) is
// named from there; deprecated.go keeps, for one release, the names the engine used
// for the results, state stores and automated-sync decision before they
// moved below it (CHANGELOG.md lists each with its replacement); and New
// and DefaultOptions wire the batteries the engine leaves
// out: every built-in renderer (render/builtin: Helm, Kustomize, Jsonnet,
// plugins) and the Helm chart source (source/helmrepo); NewCELPolicy
// (project/celpolicy) and ClustersFromKubeconfig (cache/kubeconfig) are
// this package's too. A host that needs none of them builds from package
// engine directly, with engine.New and a Toolkit of its own or none (plain
// manifests only), and does not compile them (examples/minimal).
//
// Add-ons live above the engine and are imported on their own, never by
// this package: the ApplicationSet controller, argocd-cm and
// argocd-cmd-params-cm loading, the image updater's wiring, notifications
// (notify), change previews (preview). Below it are the vocabulary and the
// machinery it is made of: the model (apis/v1alpha1), results (appstatus),
// state stores (state), the automated-sync decision (autosync), sources,
// renderers, the cluster cache, diff, health, hooks and sync.
// internal/layers' tests hold those boundaries.
//
//go:generate go run ./internal/aliasgen
package gitops
