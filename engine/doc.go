// Package engine is the core of gitops, an embeddable GitOps engine: it
// reads the desired state of Kubernetes applications from Git, renders it
// (plain YAML and JSON, Kustomize, Helm, Jsonnet), watches the live state of one or many clusters,
// compares the two, applies the difference in waves with hooks and a safe
// prune, and judges the health of what it applied.
//
// It does what Argo CD's application controller and repo server do, as small
// packages a host program wires together rather than as a server with a
// database: the host owns the process, the storage and the user interface.
// Repositories written for Argo CD work unchanged: the sync-wave, hook,
// sync-options and compare-options annotations, Helm's hook annotations,
// Application manifests of argoproj.io/v1alpha1, and Argo's Lua health
// scripts all mean here what they mean there.
//
// The flow of one application runs down the packages:
//
//	resource   keys, manifest decoding with limits, annotations, tracking ids
//	source     resolve a revision and snapshot its tree (Git or a folder)
//	render     turn a tree into objects (plain, Kustomize, Helm, Jsonnet)
//	cache      the live objects of a cluster, watched and indexed
//	diff       normalise both sides and compare
//	health     judge each live object and the application as a whole
//	sync       plan, dry-run, apply, prune and wait, wave by wave
//
// Each step is an interface with a real default implementation, so a host can
// replace one step (a custom renderer, its own cache store) and keep the rest.
// The testenv package starts a real local cluster so that hosts can test their
// own pipelines against a real API server.
//
// The model is package apis/v1alpha1 (Application, AppProject and
// ApplicationSet with Argo CD's status, DeepCopy, AddToScheme and strict
// loaders; it imports little beyond apimachinery, so an operator or portal
// that needs only the types does not pay for the engine), and an
// AppProject's rules are package project. This package keeps aliases of
// their names (Application, Project, PolicyError, ...). A project's source
// integrity criteria (sourceIntegrity, signatureKeys) are verified with
// package source/integrity against Options.GnuPGKeys (argocd-gpg-keys-cm;
// SetGnuPGKeys while running): a refresh reports a failure as Argo CD's
// ComparisonError condition, and a sync refuses the revision. Clusters
// scoped to a project (ClusterConfig.Project) add their implicit
// destinations to it and are the only ones its apps may use when it sets
// permitOnlyProjectScopedClusters.
//
// Package engine is the lean core: it renders plain manifests itself and
// every other tool through Options.Toolkit, reads Helm chart repositories
// through Options.NewChartSource, and imports none of the batteries that
// fill those seams: the Helm, Kustomize and Jsonnet renderers, Helm's
// registry client, CEL (project/celpolicy), Redis (cache/store/redisstore),
// kubeconfig loading (cache/kubeconfig), shards, nor any add-on; it builds
// at most 800 packages (internal/layers' tests hold it to all that). An app
// that needs a part the host did not plug in fails with a condition naming
// it (render.ErrNoRenderer, ErrNoChartSource).
// The root package, github.com/kubegitops/gitops, is the front door most
// hosts import: aliases of this package's names, with New and
// DefaultOptions wiring render/builtin's renderers and source/helmrepo's
// chart source in.
//
// The Engine of this package (engine.go) ties the steps together: Refresh, Sync,
// Rollback, Delete and Render do one step for a host that drives its own
// loop (an operator, a deploy portal); Run reconciles a set of apps on its
// own. Each audience has a type of its own: the one-step operations are
// Ops, which the Engine embeds; a controller's live set of apps is Apps
// (Engine.Apps), the settings that change while it runs are Settings
// (Engine.Settings), and an add-on's readers of repositories are Sources
// (Engine.Sources). One engine serves many clusters (the root's
// gitops.ClustersFromKubeconfig reads them from a kubeconfig), and a
// cluster that goes away makes only its apps Unknown. Several replicas
// share a fleet through Options.Sharder (package shard: Leases and
// consistent hashing with bounded loads) and a shared Redis render store.
// A destination without a Config is offline: Render works for it without
// any cluster, which is what a CI pipeline wants.
//
// Every method that names an app takes its v1alpha1.AppKey (namespace and
// name: Argo CD's apps in any namespace); on the objects it manages and in
// its state, an app is known by its instance name, the bare name in
// Options.ControlNamespace and "namespace_name" elsewhere. Results and
// notifications are package appstatus's types, what outlives a process
// package state's, and the automated-sync decision package autosync's:
// this package keeps no other names for them. What must outlive a
// process goes to Options.State (a state.Store: in memory, or a ConfigMap
// per app): history (the rollback targets), the last operation, and a
// running sync's checkpoints, taken after each wave and before each hook
// create, from which Resume (called by Run and Sync) finishes an operation
// a crashed process left without running a hook twice.
//
// Day-2 operations are Argo CD's resource actions (package health/actions):
// Actions lists what an app's object offers (restart, scale, create-job,
// promote-full, reconcile, ...), RunAction runs one and applies its result
// under the app's project. Settings kept in Argo CD's argocd-cm ConfigMap
// (health and action customisations, ignoreDifferences, resource
// exclusions and inclusions, also limited to clusters, ignoreResourceUpdates,
// timeouts including the hard reconciliation, tracking) load with the
// add-on package argocdcm (argocdcm.Parse, Read or LoadFile) and go into
// Options with argocdcm.Settings.Apply; what the engine cannot honour is
// refused by key, and keys it does not use (UI and server settings) are
// warnings. As in Argo CD 3, a loaded argocd-cm turns update ignoring on
// (Options.IgnoreResourceUpdates): a watched change of ignored fields only,
// with the object's health unchanged, refreshes no app. A refresh where
// nothing it read has changed (the app, the revisions its sources resolve
// to, the cluster's discovery, every live object it compared or manages)
// renders and diffs nothing: it gives its last comparison again, with
// health judged anew (engine/internal/compare; gitops_refresh_total counts both
// kinds). HardRefresh (and Run every Options.HardInterval) refreshes past
// every cache.
package engine
