// Package controller runs Argo CD ApplicationSets against a running
// engine, as Argo CD's ApplicationSet controller (applicationset/) runs
// beside its application controller: it generates each set's
// Applications (package appset) and keeps them in the engine's live set,
// which deploys them.
//
// It is an add-on above the engine: it uses only the engine's exported
// live-set API (Engine.Apps().Running, ManagedApp, CompareAndUpsert, Remove,
// AppStatus, Sync, Delete, Owns and the OnHint subscription), so the
// root package never imports it (internal/layers checks that).
//
// A host starts the engine's Run, then the sets:
//
//	go eng.Run(ctx, apps)
//	r, err := controller.New(eng, sets, controller.DefaultOptions())
//	...
//	go r.Run(ctx)              // or controller.Run(ctx, eng, sets, opts)
//	st, ok := r.Status("argocd", "guestbook")
//
// Each set is generated at once, every Options.Interval (shortened by a
// generator's requeueAfterSeconds) and when Engine.Apps().Hint names a
// repository one of its git generators reads. The generated Applications
// are upserted into the engine's Run with a compare-and-swap
// (Engine.Apps().CompareAndUpsert), so an update another writer made in between
// is never lost; spec.ignoreApplicationDifferences keeps the fields it
// names at the values Run holds; a set never takes over an Application it
// does not own (ErrAppOwned); spec.syncPolicy.applicationsSync and
// preserveResourcesOnDeletion decide what is updated and deleted, and an
// Application with the resources-finalizer (ResourcesFinalizer) has its
// objects deleted with it. Nothing is deleted after a generation that
// failed. strategy RollingSync syncs the sets' Applications step by step,
// each step waiting for the previous one to be Synced and Healthy
// (Runner.Run has the rules). When Runner.Run returns, the Applications
// it generated leave the engine's Run; their objects stay.
//
// A host that writes Application resources instead of holding them in
// the engine (the operator example, examples/operator/appsets) runs
// appset.Runner itself with GenerateOptions, which reads repositories and
// clusters as Run does.
package controller
