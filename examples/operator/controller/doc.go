// Package controller reconciles Argo CD Application custom resources
// (argoproj.io/v1alpha1) with the gitops engine, for a controller-runtime
// manager. It is the heart of the operator example; a host that has its
// own manager can use it alone:
//
//	_ = v1alpha1.AddToScheme(mgr.GetScheme()) // before the manager starts
//	events := controller.NewClusterEvents(namespace)
//	opts := gitops.DefaultOptions()
//	opts.Clusters = ...
//	opts.NewClusterCache = events.NewClusterCache // drift reaches the controller at once
//	engine, _ := gitops.New(opts)
//	r, _ := controller.New(mgr.GetClient(), controller.Options{Engine: engine, Events: events})
//	_ = r.SetupWithManager(mgr)
//
// The resources are the model's own type, v1alpha1.Application (package
// apis/v1alpha1, which gitops.Application aliases), read and written with
// the manager's typed client; a cached copy that is not the version the
// reconciler last wrote or read is read again past the cache
// (Options.Reader), since an informer may lag behind the reconciler's own
// writes and a stale copy would run a finished operation again. The
// engine is given the object as read, its operation and status are read
// from it, and the status written back is v1alpha1.ApplicationStatus,
// Argo CD's shape. The API server has already pruned fields the CRD does
// not know (or refused them, under strict field validation); a spec
// Application.Validate refuses becomes an InvalidSpecError condition
// naming each field. One reconcile does, in order:
//
//   - deletion: with resources-finalizer.argocd.argoproj.io (foreground) or
//     .../background, Engine.Delete is called until nothing of the app is
//     left, then the finalizer is removed; without one nothing is deleted;
//   - operation: a sync someone asked for runs once (recorded as Running
//     first), its outcome goes to status.operationState and, when it
//     deployed, status.history; then the operation field is removed,
//     guarded by the resourceVersion so a newer request is never lost;
//   - refresh: Engine.Refresh, then an automated sync when the policy says
//     so (the engine's own rules: a new revision always, the same one only
//     with selfHeal, never again after it failed, and not twice within the
//     self-heal timeout), remembered in status.operationState so that the
//     rules survive restarts.
//
// A refresh that compared the app also writes status.resourceTree and
// status.summary from Engine.ResourceTree (the app's objects and their
// live descendants, the external URLs and images); the tree holds no
// resourceVersion, so Pods whose status moves do not make it change.
//
// The status is written (merge patch of the status subresource) only when
// it changed, or when reconciledAt is older than the interval. After an
// automated sync the app is written once with the sync's result and the
// state a refresh right after it finds, when that is Synced within three
// seconds (the cluster cache catching up with the sync's writes; rather than
// OutOfSync with the result, then Synced a second later); and the
// controller's watch lets through only changes of generation, annotations,
// finalizers and deletion, so its own writes never trigger it (its removal
// of the refresh annotation and the notified.notifications.argoproj.io
// annotation of the notifications controller are not annotation changes
// that count). Apps come
// back after the interval; a refresh that fails returns its error so that
// the controller's rate limiter backs off. Changes of the objects an app
// manages queue it at once through ClusterEvents.
//
// Before an app's first refresh in a process, an operation a killed
// process left in the engine's StateStore is resumed (Engine.Resume) and
// its outcome written as the operation's. The deletion-approved annotation
// (AnnotationDeletionApproved) confirms what waits on Prune=confirm or
// Delete=confirm, when given at or after the wait began.
//
// With Options.Projects, the AppProjects of one namespace are the
// engine's projects (Engine.Settings().SetProjects): loaded before the first
// reconcile, read again on every AppProject event, which queues the apps
// of that project, so an app waiting for its project proceeds without a
// restart. They are read unstructured through the model's strict loader,
// so a project setting a field the engine does not implement is refused
// naming it, and its apps report that as InvalidSpecError; an app naming
// a project that does not exist gets Argo CD's "Application referencing
// project X which does not exist". A role's jwtTokens, an API server's
// business, are named once in an Event (Projects.Recorder).
//
// The engine's methods take an app's v1alpha1.AppKey (its namespace and
// name). On the objects it manages the engine tracks an app by its
// instance name: the bare name in the engine's ControlNamespace (which
// must be the namespace given to NewClusterEvents), "namespace_name" in
// any other, as Argo CD's apps in any namespace; ClusterEvents maps the
// tracking id of a changed object back to the Application.
package controller
