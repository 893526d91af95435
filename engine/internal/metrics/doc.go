// Package metrics holds the engine's Prometheus series: its own gitops_*
// ones (refresh durations, syncs, source requests, resource actions,
// refreshes by how they were answered, syncs in flight) and, when asked,
// Argo CD's application controller series under Argo CD's names and labels
// (argocd_app_info, argocd_app_sync_total, argocd_app_reconcile,
// argocd_git_request_total, argocd_cluster_api_resource_objects), so that
// dashboards and alerts written for Argo CD work (docs/monitoring.md).
//
// A Set is built once per engine by New, registered on the host's
// Registerer (never the global one; a series another engine registered on
// the same Registerer is shared, not refused). With no Registerer the
// series still count, unregistered, so the engine's code paths are the
// same either way. The engine records through the Set's methods and knows
// nothing of Prometheus; the series computed when scraped
// (argocd_app_info, argocd_cluster_api_resource_objects) ask the engine
// through a Snapshot function, never through a pointer to the engine.
package metrics
