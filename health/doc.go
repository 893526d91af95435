// Package health judges whether Kubernetes objects, and applications made
// of them, are healthy, with Argo CD's semantics so that waves, hooks and
// dashboards behave as Argo CD users expect.
//
// A Status is a Code (Healthy, Suspended, Progressing, Missing, Degraded,
// Unknown, in that order of precedence: see IsWorse) and a message.
//
// DefaultChecker judges one object. It tries, in order: deletion in
// progress; a Lua override for the exact group/Kind; a wildcard Lua
// override; a shipped Lua script (BuiltinScripts, in Argo CD's
// resource_customizations layout); a built-in Go check (Deployment,
// StatefulSet, DaemonSet, ReplicaSet, Pod, PersistentVolumeClaim, Service,
// Ingress, Job, CronJob, HorizontalPodAutoscaler, APIService,
// CustomResourceDefinition, Namespace, PodDisruptionBudget, Argo CD
// Application); and last GenericHealth, which reads the conventions most
// controllers follow (observedGeneration, Ready, Reconciling, Stalled) so
// that a custom resource without a check does not count as healthy the
// moment it is created.
//
// Lua scripts follow Argo CD's contract (the global obj; return a table
// with status and message) and run in a sandbox (see LuaLimits): no file,
// process or module access, a time limit per call (1 s by default), and
// bounds on instructions, string bytes, table entries and stack depth,
// each failing fast with a typed *LuaError. Compiled scripts are cached by
// source. Each call sees a fresh copy of the object and a fresh global
// environment, so results never depend on earlier calls.
//
// Aggregate folds per-resource health into an application's, skipping
// hooks and objects annotated argocd.argoproj.io/ignore-healthcheck.
//
// RunScriptTests runs a folder of scripts against their health_test.yaml
// fixtures, as Argo CD's own tests do; gitopsctl health-test DIR is its
// command-line face. LoadScripts reads a script library in Argo CD's
// resource_customizations layout into Options.Overrides. Resource actions,
// which run in the same sandbox, live beside this package in
// health/actions.
package health
