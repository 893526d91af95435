// Package clusters holds the engine's destinations: for each cluster an
// Application may name, its live-state cache and its syncers, connected on
// first use and replaced when the cluster's configuration changes.
//
// A Set is built from plain configuration (Config per cluster, Settings for
// all of them) and the collaborators it hands on (Collaborators: the
// constructors of caches and syncers, and what every cache and syncer asks
// or reports to). It holds no pointer to the engine: the engine asks it for
// the cluster an app names (Lookup without connecting, Connect to list and
// watch it once for every app of the cluster and probe that it is still
// there), replaces the clusters while it runs (Replace, behind
// Engine.Settings().SetClusters), and closes it.
//
// A Cluster answers what the rest of the engine asks of a destination: its
// cache (Cache), its syncers (Syncer, and SyncerAs for a project's service
// account, built once per account), its discovery read once per discovery
// generation (IsNamespaced, APIVersions), the models and dry runs of the
// comparison (Schema, DryRun), and whether it manages an object at all
// (Manages: a cluster restricted to namespaces, as an Argo CD cluster
// Secret's namespaces restrict it).
//
// An UpdateIgnorer judges each cache's watched updates by Argo CD's
// ignoreResourceUpdates rules (a change of ignored fields only, with the
// object's health unchanged, refreshes nothing), and KeepAnnotatedWhole
// keeps the objects that ask for that judgement by annotation whole in the
// cache.
//
// A cluster that cannot be reached, or whose cache cannot list, is an
// *UnavailableError naming it; only the apps of that cluster are affected.
package clusters
