package resource

// Annotation and label keys read by the engine. The argocd.argoproj.io and
// helm.sh keys mean exactly what they mean to Argo CD and Helm, so that
// repositories written for those tools work unchanged.
const (
	// AnnotationSyncWave orders objects within a phase: lower waves are
	// applied (and must become healthy) first. An integer; default 0.
	AnnotationSyncWave = "argocd.argoproj.io/sync-wave"
	// AnnotationHook makes an object a hook and names its phases, as CSV:
	// PreSync, Sync, PostSync, SyncFail, Skip.
	AnnotationHook = "argocd.argoproj.io/hook"
	// AnnotationHookDeletePolicy says when a hook is deleted, as CSV:
	// HookSucceeded, HookFailed, BeforeHookCreation.
	AnnotationHookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	// AnnotationSyncOptions holds per-object sync options as CSV, for
	// example "Prune=false,ServerSideApply=true". See ParseOptions.
	AnnotationSyncOptions = "argocd.argoproj.io/sync-options"
	// AnnotationCompareOptions holds per-object compare options as CSV, for
	// example "IgnoreExtraneous,ServerSideDiff=true". See ParseOptions.
	AnnotationCompareOptions = "argocd.argoproj.io/compare-options"
	// AnnotationIgnoreHealthcheck set to "true" leaves an object out of the
	// application's aggregated health.
	AnnotationIgnoreHealthcheck = "argocd.argoproj.io/ignore-healthcheck"
	// AnnotationArgoTrackingID is Argo CD's tracking annotation. Set
	// TrackingOptions.AnnotationKey to it to share objects with an Argo CD
	// installation's tracking scheme.
	AnnotationArgoTrackingID = "argocd.argoproj.io/tracking-id"
	// AnnotationLinkPrefix starts Argo CD's external link annotations
	// (link.argocd.argoproj.io/external-link: https://...): their values
	// are external URLs of the app (status.summary.externalURLs).
	AnnotationLinkPrefix = "link.argocd.argoproj.io/"

	// AnnotationHelmHook names Helm hook events, as CSV: pre-install,
	// pre-upgrade, post-install, post-upgrade, ...
	AnnotationHelmHook = "helm.sh/hook"
	// AnnotationHelmHookWeight orders Helm hooks; used as the sync wave
	// when AnnotationSyncWave is absent.
	AnnotationHelmHookWeight = "helm.sh/hook-weight"
	// AnnotationHelmHookDeletePolicy is Helm's delete policy, as CSV:
	// hook-succeeded, hook-failed, before-hook-creation.
	AnnotationHelmHookDeletePolicy = "helm.sh/hook-delete-policy"

	// AnnotationLastApplied is where client-side apply records the
	// configuration it last applied.
	AnnotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

	// AnnotationTrackingID is this engine's default tracking annotation:
	// "<app>:<group>/<kind>:<namespace>/<name>". See TrackingOptions.
	AnnotationTrackingID = "gitops.kubegitops.io/tracking-id"
	// AnnotationInstance names the engine instance that owns an object, so
	// that two engines on one cluster never claim each other's objects.
	AnnotationInstance = "gitops.kubegitops.io/instance"
)
