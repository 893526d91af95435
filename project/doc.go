// Package project enforces an Argo CD AppProject (v1alpha1.AppProject)
// on the applications that name it, with Argo CD's rules:
//
//   - sources: CheckSource (sourceRepos, SourcePermitted: globs with '/'
//     as separator and "!" denials) and CheckSourceNamespace
//     (sourceNamespaces: apps in any namespace; NamespacePermitted: globs
//     and regular expressions between slashes);
//   - destinations and kinds: CheckDestination, CheckObject and
//     CheckApplication (destinations with "!" denials; cluster- and
//     namespace-scoped allow and deny lists, cluster-scoped ones also by
//     name: ClusterResourceListed);
//   - project-scoped clusters (a cluster Secret's project):
//     WithScopedClusters (their implicit destinations) and
//     CheckScopedCluster (permitOnlyProjectScopedClusters);
//   - Admission, the check a sync runs on every object before anything
//     is written: the project's limits, then the host's Policy values
//     (for example package project/celpolicy's, cost-bounded CEL rules
//     over the object and the app, kept in a package of its own so that
//     the engine does not build CEL);
//   - sync windows: SyncAllowed, WindowOpen and WindowMatches (allow and
//     deny windows, cron schedules in a time zone, manualSync,
//     andOperator);
//   - impersonation: ServiceAccountFor (destinationServiceAccounts) and
//     ImpersonatedConfig.
//
// A refusal is a *PolicyError naming the project, the rule and what was
// refused, whose message is Argo CD's for the project's own rules
// ("resource :Namespace is not permitted in project my-project");
// errors.Is(err, ErrPolicy) holds for all of them. Every pattern is a glob
// of Argo CD's dialect (gobwas/glob: "*", "**", "?", "[a-z]", "{a,b}"), as
// Glob describes, but a cluster resource entry's name, which Argo CD
// matches with Go's path.Match. The engine
// (package gitops) calls these functions; a host that runs its own
// controller calls the same ones.
package project
