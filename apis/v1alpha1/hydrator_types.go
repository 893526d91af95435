package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations of Argo CD's source hydrator.
const (
	// AnnotationHydrate asks for the app's dry source to be checked and
	// hydrated now: "hard" hydrates even when the dry commit was hydrated
	// already, any other value ("normal") only when it changed. The
	// hydrator removes it (with AnnotationHydrateTimestamp) once it acted.
	AnnotationHydrate = "argocd.argoproj.io/hydrate"
	// AnnotationHydrateTimestamp identifies one request of AnnotationHydrate:
	// the hydrator removes both only while it still has the value it had
	// when the hydration began, so a request made meanwhile is not lost.
	AnnotationHydrateTimestamp = "argocd.argoproj.io/hydrate-timestamp"
)

// SourceHydrator is Argo CD's source hydrator (the rendered-manifests
// pattern): the dry source is rendered and the result committed to Git
// (SyncSource.TargetBranch at SyncSource.Path, or HydrateTo's branch), from
// where the app syncs. An app with a SourceHydrator syncs from its sync
// source (see GetSyncSource); spec.source and spec.sources are not used.
// Package hydrator does the rendering and the commits.
type SourceHydrator struct {
	// DrySource is where the dry ("don't repeat yourself") manifests live:
	// a Helm chart, a Kustomize folder, plain manifests or a plugin's input,
	// rendered as a source with the same fields would be.
	DrySource DrySource `json:"drySource"`
	// SyncSource is where the hydrated manifests are committed and synced
	// from.
	SyncSource SyncSource `json:"syncSource"`
	// HydrateTo, when set, is a staging branch the hydrated manifests are
	// committed to instead; something outside (a pull request) moves them
	// to SyncSource's branch, which the app keeps syncing from.
	HydrateTo *HydrateTo `json:"hydrateTo,omitempty"`
}

// DrySource is the source a SourceHydrator renders.
type DrySource struct {
	// RepoURL is the Git repository of the dry manifests. Read with
	// repository (and repo-creds) Secrets only.
	RepoURL string `json:"repoURL"`
	// TargetRevision is the branch, tag or commit rendered (HEAD: the
	// repository's default branch).
	TargetRevision string `json:"targetRevision"`
	// Path is the folder rendered, relative to the repository's root.
	Path string `json:"path"`
	// Helm are the options of a Helm render (as in a source).
	Helm *ApplicationSourceHelm `json:"helm,omitempty"`
	// Kustomize are the options of a Kustomize render (as in a source).
	Kustomize *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	// Directory are the options of a folder of manifests (as in a source).
	Directory *ApplicationSourceDirectory `json:"directory,omitempty"`
	// Plugin renders with a config management plugin the host configured
	// (as in a source).
	Plugin *ApplicationSourcePlugin `json:"plugin,omitempty"`
}

// SyncSource is where a SourceHydrator's manifests are committed and
// synced from.
type SyncSource struct {
	// TargetBranch is the branch the app syncs from; without HydrateTo,
	// also the branch the hydrated manifests are committed to (created when
	// missing).
	TargetBranch string `json:"targetBranch"`
	// Path is the folder the hydrated manifests are written to and synced
	// from; never the repository's root. Files of the folder the hydrator
	// does not write are left as they are.
	Path string `json:"path"`
	// RepoURL is the repository of the hydrated manifests; empty means
	// DrySource.RepoURL. Pushed to with repository-write (or
	// repo-write-creds) Secrets only.
	RepoURL string `json:"repoURL,omitempty"`
}

// HydrateTo is a staging branch for a SourceHydrator's commits; the
// repository and path are SyncSource's.
type HydrateTo struct {
	// TargetBranch is the branch the hydrated manifests are committed to.
	TargetBranch string `json:"targetBranch"`
}

// GetDrySource returns the dry source as an ApplicationSource (the
// source that is rendered).
func (s SourceHydrator) GetDrySource() ApplicationSource {
	d := s.DrySource
	return ApplicationSource{RepoURL: d.RepoURL, Path: d.Path, TargetRevision: d.TargetRevision,
		Helm: d.Helm, Kustomize: d.Kustomize, Directory: d.Directory, Plugin: d.Plugin}
}

// GetSyncSource returns the source the app syncs from: SyncSource's
// repository (DrySource's when empty), path and branch.
func (s SourceHydrator) GetSyncSource() ApplicationSource {
	repo := s.SyncSource.RepoURL
	if repo == "" {
		repo = s.DrySource.RepoURL
	}
	return ApplicationSource{RepoURL: repo, Path: s.SyncSource.Path, TargetRevision: s.SyncSource.TargetBranch}
}

// GetHydrateToSource returns where the hydrated manifests are committed:
// the sync source, on HydrateTo's branch when it is set.
func (s SourceHydrator) GetHydrateToSource() ApplicationSource {
	src := s.GetSyncSource()
	if s.HydrateTo != nil {
		src.TargetRevision = s.HydrateTo.TargetBranch
	}
	return src
}

// HydrateOperationPhase is the phase of a hydrate operation.
type HydrateOperationPhase string

// The phases of a hydrate operation.
const (
	HydrateOperationPhaseHydrating HydrateOperationPhase = "Hydrating"
	HydrateOperationPhaseFailed    HydrateOperationPhase = "Failed"
	HydrateOperationPhaseHydrated  HydrateOperationPhase = "Hydrated"
)

// SourceHydratorStatus is status.sourceHydrator: the hydrator's last and
// current operation (Argo CD's shape).
type SourceHydratorStatus struct {
	// LastSuccessfulOperation is the last hydration that succeeded.
	LastSuccessfulOperation *SuccessfulHydrateOperation `json:"lastSuccessfulOperation,omitempty"`
	// CurrentOperation is the running or last hydration.
	CurrentOperation *HydrateOperation `json:"currentOperation,omitempty"`
	// LastComparedDryRevision is the dry commit the hydrator last looked
	// at, also when it had nothing to do.
	LastComparedDryRevision string `json:"lastComparedDryRevision,omitempty"`
}

// HydrateOperation is one hydration of an app.
type HydrateOperation struct {
	// StartedAt is when the hydration began.
	StartedAt metav1.Time `json:"startedAt,omitempty"`
	// FinishedAt is when it ended; unset while it runs.
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// Phase is Hydrating, Failed or Hydrated.
	Phase HydrateOperationPhase `json:"phase"`
	// Message says why a hydration failed.
	Message string `json:"message"`
	// DrySHA is the dry commit hydrated.
	DrySHA string `json:"drySHA,omitempty"`
	// HydratedSHA is the commit holding its hydrated manifests (the commit
	// made, or the branch's tip when nothing rendered changed).
	HydratedSHA string `json:"hydratedSHA,omitempty"`
	// SourceHydrator is the spec.sourceHydrator the hydration used.
	SourceHydrator SourceHydrator `json:"sourceHydrator,omitempty"`
}

// SuccessfulHydrateOperation is the last hydration of an app that
// succeeded.
type SuccessfulHydrateOperation struct {
	// DrySHA is the dry commit hydrated.
	DrySHA string `json:"drySHA,omitempty"`
	// HydratedSHA is the commit holding its hydrated manifests.
	HydratedSHA string `json:"hydratedSHA,omitempty"`
	// SourceHydrator is the spec.sourceHydrator the hydration used.
	SourceHydrator SourceHydrator `json:"sourceHydrator,omitempty"`
}
