// Package controller runs Argo CD Image Updater (package imageupdate) over
// the apps of an engine (package gitops). It sits above the engine and uses
// only its exported API, as Argo CD keeps the image updater a controller of
// its own; the engine never imports it.
//
// AppOf turns an Application into the plain imageupdate.App the updater
// reads: its images as the engine renders them, its repository credentials
// (Engine.Sources().RepoCredentials) and its source type as Argo CD Image Updater
// decides it (write-back-target kustomization, else status.sourceType, else
// the tool its source renders with: Engine.SourceType).
//
// The argocd write-back is an override of the app's spec (kustomize images,
// Helm parameters). ApplyOverride keeps it in the app's state record
// (Engine.Apps().UpdateAppState, under the lock of the engine's own writes, so it
// survives a restart with a persistent Options.State) and hands the changed
// app to the engine's Run (Engine.Apps().Upsert); HeldOverride reads it back. The
// record keeps the override as JSON that the engine and the state stores
// never decode (state.AppState.ImageOverride), so that neither imports the
// image updater; this package writes and reads it, in the form records
// have always had, so a record an earlier release wrote still loads.
// WithOverride merges one into an Application for a host that stores
// Applications itself.
//
// UpdateApps runs one round over a list of apps: the held override is
// applied again to a spec that lacks it, the updater runs, an override is
// applied and a git commit hints its repository (Engine.Apps().Hint). Run repeats
// rounds every interval over the top-level apps the engine's Run owns
// (Engine.Apps().OwnedApps).
package controller
