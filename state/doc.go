// Package state is what the engine remembers of an app beyond one process
// (its sync history, its last operation, the operation it was running) and
// where it keeps it: Store is the seam (Options.State), MemoryStore the
// default, ConfigMapStore one ConfigMap per app for hosts without the
// Application CRD. It sits below the engine: a store, or a host reading
// one, does not import package gitops.
//
// A store is keyed by the app's instance name in the engine (its tracking
// id: the bare name for an app of the control namespace,
// "<namespace>_<name>" otherwise); the engine's methods take the app's
// v1alpha1.AppKey and find the record themselves.
package state
