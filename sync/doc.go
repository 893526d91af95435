// Package sync applies an application's desired state to a cluster the way
// Argo CD does, without kubectl: a plan ordered by phase (PreSync, Sync,
// PostSync), wave and kind; a server-side dry-run of every task before any
// write, reporting every failure at once; server-side apply with our field
// manager (a client-side three-way mode with the last-applied annotation
// remains for compatibility, and client-side ownership is migrated on the
// first server-side apply); hooks created, tracked by the UID of their
// creation, awaited and deleted by policy; a wait after each wave until its
// resources are healthy, judged against the generation observed at apply
// time; and a prune that deletes only what carries this application's
// tracking id and instance, off unless enabled, never on an empty desired
// state, never a namespace still in use, never a cluster-scoped object
// without an opt-in.
//
// Scope is decided in one place, for the engine's refresh as for the
// plan: Scope asks the cluster first, then the CustomResourceDefinitions of
// the same desired state (CRDScopes), and SettleNamespace gives a
// namespaced object the destination namespace and takes a cluster-scoped
// object's away.
//
// Syncer.Sync runs an operation to its end and returns a Result: the
// operation's phase and a row per object (action, status, message). Its
// State is a plain serialisable value: a host that persists it can resume
// an interrupted operation after a restart, because every step is
// re-entrant (server-side apply is idempotent, and hooks already created are
// found by name and UID rather than created twice). RetrySync wraps Sync
// with Argo CD's retry policy and lets a newer revision pre-empt retries.
//
// Object options come from the argocd.argoproj.io/sync-options annotation,
// merged over the application's options: Prune=false|confirm, PruneLast,
// Replace, Force, ServerSideApply, ApplyOutOfSyncOnly, Validate=false,
// SkipDryRunOnMissingResource, ClientSideApplyMigration, and at application
// level CreateNamespace, PrunePropagationPolicy and RespectIgnoreDifferences
// (existing objects are applied with their ignored fields at their live
// values, through Request.KeepIgnored; without it the whole desired object
// is applied, ignored fields included, as in Argo CD).
//
// An update the API server refuses because it changes a field that cannot
// change after creation is recognised from the error's structured causes
// and each kind's known immutable fields (a Service's clusterIP, a
// workload's selector, a StatefulSet's volumeClaimTemplates, a PVC's spec,
// a Job's template, ...) and reported as an ImmutableFieldError naming the
// fields; Force=true on the object or the app, or Options.RecreateOnImmutable,
// deletes and re-creates the object instead.
package sync
