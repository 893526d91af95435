// Package appsets reconciles Argo CD ApplicationSet custom resources
// (argoproj.io/v1alpha1, typed as v1alpha1.ApplicationSet) for a
// controller-runtime manager, as Argo CD's ApplicationSet controller does:
// it writes Application custom resources, owned by the set, and leaves
// deploying them to the Application controller (package controller of the
// operator, or any other). A host with its own manager uses it alone:
//
//	r, _ := appsets.New(mgr.GetClient(), appsets.Options{Engine: engine})
//	_ = r.SetupWithManager(mgr) // its scheme needs v1alpha1.AddToScheme
//
// One reconcile of a set:
//
//   - generates its Applications with an appset.Runner whose git
//     generators read through the engine's sources and credentials, with
//     the engine's resolve cache (appset/controller.GenerateOptions); whose
//     clusters generators read every cluster Secret of the controller's
//     namespace at each generation (declarative ones, project-scoped ones,
//     and the in-cluster destination unless argocd-cm says
//     cluster.inClusterEnabled: "false"); whose scmProvider and pullRequest
//     generators reach Argo CD's forges (appset/scm/all, tokens from the
//     set's namespace, Options.Providers) and plugin generators their
//     plugin; a generator that fails keeps its last good output, and then
//     nothing is deleted; a cluster Secret that cannot be read fails the
//     generation (ParametersGenerated False, naming the Secret) while the
//     other clusters are generated for;
//   - creates each generated Application in the set's namespace with a
//     controller ownerReference to the set; updates (labels, annotations
//     but for the refresh and deletion-approved ones people set, finalizers
//     and spec; never operation or status) and deletes them as
//     spec.syncPolicy.applicationsSync allows (sync, the default: all;
//     create-update: no deletion; create-delete: no update; create-only);
//     keeps the fields spec.ignoreApplicationDifferences names at their
//     live values (appset.KeepIgnoredDifferences) and the annotations and
//     labels spec.preservedFields names; leaves an existing
//     Application the set does not own alone, and reports it (ErrNotOwned);
//   - under spec.syncPolicy.preserveResourcesOnDeletion removes Argo CD's
//     resources finalizers from an Application before deleting it, so the
//     objects it deployed stay;
//   - strategy RollingSync: takes automated sync off the generated
//     Applications and syncs them itself by writing their operation field
//     (a sync initiated by "applicationset-controller", with the prune of
//     the template's automated policy), step by step: the OutOfSync
//     Applications of the first step whose Applications are not all Synced
//     and Healthy, at most maxUpdate at once, counting those synced and not
//     yet Healthy; the next step starts when every Application of the step
//     reports Synced and Healthy. Applications no step selects are not
//     synced. Each Application's progress (Waiting, Pending, Progressing,
//     Healthy) is kept in status.applicationStatus, so a restarted
//     operator carries on; a rollout sync that failed is not run again
//     until the Application's revision changes;
//   - writes the status through the status subresource: conditions
//     ErrorOccurred, ParametersGenerated, ResourcesUpToDate and (RollingSync)
//     RolloutProgressing with Argo CD's reasons, status.resources (each
//     owned Application's sync and health) and resourcesCount;
//   - comes back after Options.Interval, or sooner at the shortest
//     requeueAfterSeconds of its generators; a change of the set's spec or
//     annotations, of an owned Application's spec, metadata, sync or
//     health status, and of a cluster Secret (for sets with clusters or
//     clusterDecisionResource generators) brings it back at once. The annotation
//     argocd.argoproj.io/application-set-refresh (Argo CD's) forgets the
//     branches its git generators resolved (Engine.Apps().Invalidate), generates
//     at once and is removed.
//
// RefreshPullRequest and RefreshPush set the refresh annotation on the
// sets a webhook event concerns (package appset/webhook's matching), as
// Argo CD's ApplicationSet webhook does; the operator serves them on
// -applicationset-webhook-bind-address.
//
// Deleting a set deletes its Applications through their ownerReferences
// (the garbage collector). When the set's policy does not allow deletion
// (create-only, create-update) or it preserves resources on deletion, the
// reconciler keeps its own finalizer (Finalizer) on the set, and before
// letting the set go either takes its ownerReferences off the
// Applications (they stay) or removes their resources finalizers (they go,
// their objects stay). That holds for the default background deletion;
// with foreground deletion the garbage collector deletes the Applications
// while the set still waits on the finalizer.
//
// A generated Application whose project the engine does not have (with
// Options.Projects, the AppProjects of the controller's namespace) is not
// written, as in Argo CD: the set reports ErrorOccurred=True and
// ResourcesUpToDate=False with reason ApplicationValidationError and
// "application references project X which does not exist"
// (*MissingProjectError), an existing one is left as it is, and the other
// Applications are written; every set is generated again when an
// AppProject changes.
//
// Errors the status reports are *Error values naming the set and, when
// one is at fault, the Application; generation failures are appset's
// *appset.Error, which name the set and the generator.
package appsets
