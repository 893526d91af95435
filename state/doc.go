// Package state is what the engine remembers of an app beyond one process
// (its sync history, its last operation, the operation it was running) and
// where it keeps it: Store is the seam (Options.State), MemoryStore the
// default, ConfigMapStore one ConfigMap per app for hosts without the
// Application CRD. It sits below the engine: a store, or a host reading
// one, does not import package gitops.
//
// A store is keyed by the app's engine key (Engine.AppKey: the bare name
// for an app of the control namespace, "<namespace>_<name>" otherwise).
package state
