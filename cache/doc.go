// Package cache keeps the live state of a cluster in memory so that
// diffing, health and pruning never ask the API server for what it already
// said.
//
// A ClusterCache discovers the server's preferred API kinds, keeps the ones
// its ResourceFilter and namespaces allow (DefaultExclusions leaves out
// Events, Leases and other kinds that churn or cannot be watched), checks
// with SelfSubjectAccessReviews that it may both list and watch each one,
// and then, per kind, lists in pages of 500 (at most ListConcurrency lists
// at a time) and watches from the list's resourceVersion. A watch that ends
// is resumed from the last resourceVersion; a 410 Gone relists that kind
// alone. CRD and APIService events trigger a new discovery, which starts and
// stops watches as kinds come and go.
//
// Failure is per kind. A kind whose list or watch fails (a conversion
// webhook that is down, a forbidden list, an aggregated API that is gone) is
// tainted with a *KindError and retried with backoff, while every other kind
// keeps serving; Tainted reports them, so a host refuses only the
// applications that touch them (Argo CD marks every application of the
// cluster Unknown instead, argo-cd#20828). An API server restart taints
// kinds for as long as it is down and the cache recovers by itself.
//
// Memory is spent on what is managed. Every object loses managedFields and
// the last-applied annotation, and a PopulateFunc decides whether the whole
// object is kept or only its identity, labels, owners and a small info
// value; the default keeps whole objects for objects tracked by an
// application (resource.Tracking) and for CRDs. A whole object is kept as
// its JSON (1.4 KB per ConfigMap or Pod of BenchmarkHeapPerObject, trimmed,
// against 3.5 KB decoded) and decoded for each reader of Get and Managed,
// who gets a copy of its own; ObjectVersion and ManagedVersions (the
// Versions interface) tell whether objects changed without decoding any.
// The benchmarks report bytes per object both ways.
//
// Indexes make every query cost O(its answer): by key, by application
// (Managed), by namespace, by kind, by owner UID (Children, across
// namespaces), plus parents inferred without ownerReferences (Endpoints and
// EndpointSlices to their Service, PVCs to their StatefulSet). Tree walks
// them breadth first and visits each object once, so ownership cycles end.
//
// Subscribe delivers changes in batches (100 ms by default), coalesced per
// object, each carrying the application of the object or of its nearest
// tracked owner; Collaborators.SkipUpdate drops the updates a host judges
// irrelevant (StatusOnlyUpdate: those that touch only status,
// resourceVersion or managedFields; the engine's argocd-cm
// ignoreResourceUpdates rules).
//
// A host with several clusters builds one cache per client config (the
// engine keeps one per destination, reachable by name and server URL);
// package cache/kubeconfig reads them from a kubeconfig file's contexts.
//
// The watches use the dynamic client's List and Watch, not informers: an
// informer keeps its own full copy of every object (doubling what trimming
// saves), reports list and watch failures only through a global handler (so
// a failing kind cannot be singled out), and relists on its own schedule.
package cache
