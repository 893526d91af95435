package argocdcm

import "slices"

// Reasons of the argocd-cm table.
const (
	noEventLabel = "the operator's Events on Applications carry no labels"
)

var (
	api   = []Component{APIServer}
	ui    = []Component{WebUI}
	apiUI = []Component{APIServer, WebUI}
)

// SettingKeys is the table of argocd-cm: every key Argo CD v3.6 reads
// from it (util/settings and the docs' argocd-cm.yaml), with what this
// module does with each, sorted by name. Every key this module applies,
// it applies to a running operator (Key.Live). A key in no entry is
// named as not a setting this module knows.
func SettingKeys() []Key {
	k := slices.Clone(settingKeys)
	slices.SortFunc(k, func(a, b Key) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return k
}

// LookupSetting returns the table's entry of an argocd-cm key.
func LookupSetting(name string) (Key, bool) { return lookup(settingKeys, name) }

var settingKeys = []Key{
	{Name: "resource.customizations", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "per-kind health, actions, ignoreDifferences, ignoreResourceUpdates and knownTypeFields (the legacy form)"},
	{Name: "resource.customizations.health.", Components: ctrl, Use: UseApplied, Live: true, Effect: "a kind's Lua health script"},
	{Name: "resource.customizations.useOpenLibs.", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "scripts run in the sandbox: string, table, math, os.time, os.date and os.clock are there"},
	{Name: "resource.customizations.actions.", Components: ctrl, Use: UseApplied, Live: true, Effect: "a kind's Lua resource actions"},
	{Name: "resource.customizations.ignoreDifferences.", Components: ctrl, Use: UseApplied, Live: true, Effect: "fields every app's diff ignores"},
	{Name: "resource.customizations.ignoreResourceUpdates.", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "fields whose watched changes refresh no app"},
	{Name: "resource.customizations.knownTypeFields.", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "custom resource fields compared as built-in types"},
	{Name: "resource.ignoreResourceUpdatesEnabled", Components: ctrl, Use: UseApplied, Live: true, Effect: "whether ignoreResourceUpdates rules apply"},
	{Name: "resource.exclusions", Components: ctrl, Use: UseApplied, Live: true, Effect: "kinds the cluster caches do not watch"},
	{Name: "resource.inclusions", Components: ctrl, Use: UseApplied, Live: true, Effect: "the only kinds the cluster caches watch"},
	{Name: "resource.compareoptions", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "ignoreAggregatedRoles, ignoreResourceStatusField and ignoreDifferencesOnResourceUpdates"},
	{Name: "resource.respectRBAC", Components: ctrl, Use: UseApplied, Live: true, Effect: "the cluster caches watch only what they may list"},
	{Name: "timeout.reconciliation", Components: ctrlRS, Use: UseApplied, Live: true, Effect: "each app's refresh interval (-interval; 0: off)"},
	{Name: "timeout.reconciliation.jitter", Components: ctrl, Use: UseApplied, Live: true, Effect: "the most a periodic refresh is delayed"},
	{Name: "timeout.hard.reconciliation", Components: ctrl, Use: UseApplied, Live: true, Effect: "each app's hard refresh interval"},
	{Name: "application.instanceLabelKey", Components: ctrl, Use: UseApplied, Live: true, Effect: "the label of the label tracking methods"},
	{Name: "application.resourceTrackingMethod", Components: ctrl, Use: UseApplied, Live: true, Effect: "how managed objects are tracked"},
	{Name: "installationID", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the installation id written on, and required of, managed objects (-instance-id wins)"},
	{Name: "cluster.inClusterEnabled", Components: []Component{ApplicationController, APIServer}, Use: UseApplied, Live: true,
		Effect: "whether apps may deploy to the cluster the operator runs in (https://kubernetes.default.svc, in-cluster)"},
	{Name: "application.sync.impersonation.enabled", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "syncs act as the AppProject's destinationServiceAccounts"},
	{Name: "application.sync.impersonation.enforced", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "with impersonation, a sync whose project names no service account fails"},
	{Name: "kustomize.buildOptions", Components: repo, Use: UseApplied, Live: true,
		Effect: "kustomize build's flags (--load-restrictor, --reorder, --enable-helm, --enable-managedby-label)"},
	{Name: "kustomize.path.", Components: repo, Use: UseApplied, Live: true,
		Effect: "the path of the kustomize binary that builds the apps whose kustomize.version is <name>"},
	{Name: "kustomize.version.", Components: repo, Use: UseApplied, Live: true, Effect: "kustomize.path.<name>'s deprecated spelling"},
	{Name: "kustomize.buildOptions.", Components: repo, Use: UseApplied, Live: true,
		Effect: "the build flags of the kustomize binary <name> (else kustomize.buildOptions')"},
	{Name: "helm.valuesFileSchemes", Components: repo, Use: UseApplied, Live: true, Effect: "the URL schemes of remote Helm value files"},

	{Name: "resource.selectors", Components: ctrl, Use: UseNotImplemented, Same: "",
		Effect: "the cluster caches watch every object of an included kind, not only those a label selector picks"},
	{Name: "resource.manifest.compression.enabled", Components: ctrl, Use: UseNotImplemented, Same: "false",
		Effect: "the cluster caches keep objects as objects, uncompressed"},
	{Name: "resource.manifest.compression", Components: ctrl, Use: UseMeaningless, Effect: "the cluster caches keep objects as objects, uncompressed"},
	{Name: "resource.manifest.storage", Components: ctrl, Use: UseMeaningless, Effect: "the cluster caches keep objects as objects, uncompressed"},
	{Name: "kustomize.enable", Components: repo, Use: UseNotImplemented, Same: "true", Effect: "Kustomize sources are always rendered"},
	{Name: "helm.enable", Components: repo, Use: UseNotImplemented, Same: "true", Effect: "Helm sources are always rendered"},
	{Name: "jsonnet.enable", Components: repo, Use: UseNotImplemented, Same: "true", Effect: "directory sources are always rendered"},
	{Name: "resource.includeEventLabelKeys", Components: ctrl, Use: UseNotImplemented, Same: "", Effect: noEventLabel},
	{Name: "resource.excludeEventLabelKeys", Components: ctrl, Use: UseNotImplemented, Same: "", Effect: noEventLabel},
	{Name: "globalProjects", Components: ctrl, Use: UseNotImplemented, Same: "",
		Effect: "AppProjects inherit nothing from global projects: each project is read as it is"},
	{Name: "commit.author.name", Components: ctrl, Use: UseApplied, Live: true, Effect: "the author of hydrated commits (Settings.Hydrator; a change applies to the next hydrated commit)"},
	{Name: "commit.author.email", Components: ctrl, Use: UseApplied, Live: true, Effect: "the author of hydrated commits (Settings.Hydrator; a change applies to the next hydrated commit)"},
	{Name: "sourceHydrator.", Components: ctrl, Use: UseApplied, Live: true, Effect: "the hydrated commit's message and README templates (Settings.Hydrator; a change applies to the next hydrated commit)"},

	{Name: "url", Components: api, Use: UseOtherComponent},
	{Name: "additionalUrls", Components: api, Use: UseOtherComponent},
	{Name: "statusbadge.", Components: api, Use: UseOtherComponent},
	{Name: "users.", Components: api, Use: UseOtherComponent},
	{Name: "passwordPattern", Components: api, Use: UseOtherComponent},
	{Name: "admin.enabled", Components: api, Use: UseOtherComponent},
	{Name: "accounts.", Components: api, Use: UseOtherComponent},
	{Name: "dex.", Components: []Component{Dex, APIServer}, Use: UseOtherComponent},
	{Name: "oidc.", Components: api, Use: UseOtherComponent},
	{Name: "webhook.", Components: api, Use: UseOtherComponent},
	{Name: "server.", Components: api, Use: UseOtherComponent},
	{Name: "exec.", Components: apiUI, Use: UseOtherComponent},
	{Name: "extension.config", Components: api, Use: UseOtherComponent},
	{Name: "extension.config.", Components: api, Use: UseOtherComponent},
	{Name: "application.sync.requireOverridePrivilegeForRevisionSync", Components: api, Use: UseOtherComponent},
	{Name: "resource.sensitive.mask.annotations", Components: api, Use: UseOtherComponent},
	{Name: "ga.", Components: ui, Use: UseOtherComponent},
	{Name: "help.", Components: ui, Use: UseOtherComponent},
	{Name: "ui.", Components: ui, Use: UseOtherComponent},
	{Name: "application.links", Components: apiUI, Use: UseOtherComponent},
	{Name: "project.links", Components: apiUI, Use: UseOtherComponent},
	{Name: "resource.links", Components: apiUI, Use: UseOtherComponent},
	{Name: "resource.customLabels", Components: ui, Use: UseOtherComponent},
	{Name: "application.allowedNodeLabels", Components: ui, Use: UseOtherComponent},
}
