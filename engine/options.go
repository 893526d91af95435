package engine

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/cache/store"
	"github.com/kubegitops/gitops/diff"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/health/actions"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/state"
	"github.com/kubegitops/gitops/sync"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
)

// Options configure an Engine. Start from DefaultOptions; every zero field
// takes its default in New.
type Options struct {
	// Clusters are the destinations apps may name. Required.
	Clusters []ClusterConfig
	// Projects are the AppProjects apps may name (SetProjects replaces
	// them while the engine runs). Without a project named "default", the
	// default project allows everything, as Argo CD's does.
	Projects []Project
	// Policies are the host's checks of every object to apply.
	Policies []Policy
	// GnuPGKeys are the GnuPG public keys the signatures of synced
	// commits and tags are verified against, for apps whose project asks
	// for it (AppProject sourceIntegrity, signatureKeys): Argo CD's
	// argocd-gpg-keys-cm data, each key ID mapped to its ASCII-armored
	// public key. New fails on an entry it cannot read (a
	// *GnuPGKeyError); SetGnuPGKeys replaces them while the engine runs.
	// Default none: every signature is by a key not in the key ring.
	GnuPGKeys map[string]string
	// SourceFor picks the Source of a repository URL. Default: local
	// folders (absolute paths and file:// URLs; a relative path is refused,
	// naming it) from source/dir, everything else
	// from Git (source/git).
	SourceFor func(repoURL string) (source.Source, error)
	// ChartSource reads the Helm charts of sources with spec.source.chart
	// (HTTP(S) chart repositories and OCI registries) and the dependencies
	// charts lack. Default nil: the one NewChartSource builds.
	ChartSource source.Source
	// NewChartSource builds the chart source on first use, with the
	// engine's Log, when ChartSource is nil. Default nil: package engine
	// builds no chart source by itself (Helm's registry client stays out
	// of the lean core), and an app with a chart source, or a chart with a
	// dependency to fetch, fails its comparison with an error wrapping
	// ErrNoChartSource that names the source and these two options. The
	// root package (gitops.New, gitops.DefaultOptions) sets
	// source/helmrepo.ChartSource, a source/helmrepo Source with its
	// defaults.
	NewChartSource func(log logr.Logger) (source.Source, error)
	// NewOCISource builds the source of OCI artifacts (sources whose
	// repoURL is oci://registry/repo and which name no chart: Argo CD's
	// OCI sources, a folder inside an artifact) on first use, with the
	// engine's Log, unless SourceFor picks every source. Default nil:
	// package engine builds none by itself, and such a source fails its
	// comparison with an error wrapping ErrNoOCISource. The root package
	// (gitops.New, gitops.DefaultOptions) sets source/oci.NewSource.
	NewOCISource func(log logr.Logger) (source.Source, error)
	// Credentials returns the credentials of a repository, or nil, for
	// the fetches made for no app (ApplicationSet git generators) and,
	// when ProjectCredentials is nil, for every app whatever its project.
	// Nil while ProjectCredentials is set: ProjectCredentials with project
	// "" (which a repository scoped to a project never serves).
	Credentials func(repoURL string) *source.Credentials
	// ProjectCredentials returns the credentials with which an app of
	// project (its spec.project, "default" when empty) reads repoURL, or
	// nil. When set, every fetch made for an app asks it (resolving and
	// snapshotting its sources, ref sources and charts, its charts'
	// dependencies, revision metadata, RepoCredentials), so that a host
	// can serve a repository to the apps of some projects only (Argo CD's
	// project-scoped repositories: source/repocreds' Store.ForProject and
	// Live.ForProject). Renders are cached per project.
	ProjectCredentials func(project, repoURL string) *source.Credentials
	// Toolkit builds the renderers of the tools (Helm, Kustomize, Jsonnet,
	// config-management plugins), given the fetcher of chart dependencies
	// through the engine's chart source, credentials and the app project's
	// sourceRepos. Default nil: the engine renders plain manifests only, and
	// an app of any other tool fails its render with a *render.Error
	// wrapping render.ErrNoRenderer that names the tool. The root package
	// (gitops.New, gitops.DefaultOptions) sets render/builtin.Tools, every
	// built-in renderer; package engine itself never imports them, so a host
	// that needs none of them does not build them.
	Toolkit func(deps render.DependencyFetcher) render.Tools
	// Renderers replace the renderer of a tool the Toolkit (or the plain
	// renderer) gives; a kind no tool is detected as is refused.
	Renderers map[render.Kind]render.Renderer
	// Decryptor, when set, decrypts encrypted files (SOPS documents with
	// the sops/ module's decryptor) as every tool reads them (see
	// render.Decrypting). Outputs that hold plaintext are cached in this
	// process only, never in RenderStore. Default none: a SOPS document
	// that a plain directory, Kustomize or a Helm value file would read
	// fails the render with a *render.EncryptedError naming the file (a
	// ComparisonError; nothing is applied).
	Decryptor render.Decryptor
	// RenderStore caches rendered manifests. Default: an in-memory LRU of
	// 256 MiB.
	RenderStore store.Store
	// Health judges resources. Default: health.NewChecker with defaults.
	// argocdcm.Settings.Apply adds argocd-cm's health scripts to a
	// *health.DefaultChecker's own Lua overrides (argocd-cm's win on the
	// same kind).
	Health health.Checker
	// Actions lists and runs resource actions (Engine.Actions,
	// Engine.RunAction). Default: actions.New with the built-in actions.
	Actions *actions.Runner
	// NewClusterCache builds each cluster's live-state cache, with the
	// cluster's settings (Options.Cache, see there) and the engine's
	// collaborators (its tracking, logger and registerer, the Populate
	// that keeps what ResourceTree shows, the SkipUpdate of
	// IgnoreResourceUpdates). Default: cache.New.
	NewClusterCache func(cfg *rest.Config, opts cache.Options, with cache.Collaborators) (ClusterCache, error)
	// NewDiffer builds the differ of one set of app options. Default:
	// diff.New.
	NewDiffer func(opts diff.Options) (Differ, error)
	// NewSyncer builds each cluster's syncer (and those that impersonate a
	// service account), with Options.Sync and the engine's collaborators
	// (its tracking, health checker and logger; the cluster cache answers
	// the app's live objects and the waits). Default: sync.New.
	NewSyncer func(cfg *rest.Config, opts sync.Options, with sync.Collaborators) (Syncer, error)
	// Tracking says where tracking ids go and which instance this is.
	Tracking resource.Tracking
	// Cache are the settings of each cluster's cache (cache.Options holds
	// settings only: what the cache asks or reports to, the engine gives
	// it, see NewClusterCache). Unless it says which managedFields to
	// keep, the engine keeps them on the objects it tracks: comparing as
	// server-side apply will apply needs the managers of each field (set
	// KeepManagedFieldsOf to the sync's field manager to keep only ours,
	// at the price of reporting fields other appliers own as drift); with
	// Sync.ClientSideApply it keeps the last-applied annotation too. Name
	// and Server, when empty, are each cluster's own; a cluster with
	// Namespaces (its Secret's) watches only those.
	Cache cache.Options
	// Sync are the settings of each cluster's syncers (sync.Options holds
	// settings only; the engine gives the collaborators, see NewSyncer).
	Sync sync.Options
	// ClusterSyncTimeout bounds the wait for a cluster's cache to list
	// everything on first use. Default 2 minutes.
	ClusterSyncTimeout time.Duration
	// CompareStatus says whose status the comparison looks at:
	// CompareStatusNone (the default, Argo CD's ignoreResourceStatusField
	// all: status never counts) or CompareStatusAll, every kind but
	// IgnoreStatus's (ignoreResourceStatusField none; crd ignores only
	// CustomResourceDefinitions'). A desired object rarely sets status, and
	// fields it does not set are never drift, so this matters for objects
	// whose manifests carry status.
	CompareStatus CompareStatusMode
	// IgnoreStatus are the kinds whose status is ignored with
	// CompareStatusAll.
	IgnoreStatus []schema.GroupKind
	// IgnoreAggregatedRoles ignores the rules of ClusterRoles that have an
	// aggregationRule, which the aggregation controller writes (Argo CD's
	// resource.compareoptions ignoreAggregatedRoles). Default false.
	IgnoreAggregatedRoles bool
	// KnownTypeFields are fields of custom resources that hold built-in
	// types (a PodSpec in a CronTab), compared as those types are (Argo
	// CD's resource.customizations.knownTypeFields).
	KnownTypeFields []diff.KnownTypeField
	// ControlNamespace is the namespace of the control plane (Argo CD's
	// argocd): an Application in it, or in no namespace, may use any
	// project; an Application in another namespace only a project whose
	// sourceNamespaces list that namespace (apps in any namespace).
	// Default "argocd".
	ControlNamespace string
	// ServerSideDiff compares every object by a server-side apply dry run
	// (Argo CD's controller.diff.server.side), instead of predicting the
	// apply locally: admission webhooks and defaulting are seen as the
	// server would apply them, at the cost of one dry-run request per
	// object whose desired state or live resourceVersion changed. An
	// object's or the Application's argocd.argoproj.io/compare-options
	// ServerSideDiff=true|false overrides it. Default false.
	ServerSideDiff bool
	// RefCacheTTL is how long the branches and tags a Git repository
	// advertised are reused before it is asked again (one ls-remote per
	// repository and TTL, shared by all its apps). Default 1 minute; never
	// longer than Interval, so polling sees a push within one interval.
	// It applies to the engine's own Git source, not to Options.SourceFor.
	RefCacheTTL time.Duration
	// IgnoreDifferences apply to every application, before its own
	// ignoreDifferences (argocd-cm's resource.customizations.
	// ignoreDifferences.<group_Kind> and .all; see argocdcm.Settings).
	IgnoreDifferences []ResourceIgnoreDifferences
	// IgnoreResourceUpdates, when not nil, are Argo CD's
	// ignoreResourceUpdates rules (argocd-cm's resource.customizations.
	// ignoreResourceUpdates.<group_Kind> and .all): a watched update of a
	// tracked object (or of one annotated
	// argocd.argoproj.io/ignore-resource-updates: "true") that changes only
	// these fields and AlwaysIgnoredOnUpdates, and leaves its health as it
	// was, refreshes no app. Default nil: every update refreshes. An
	// empty, non-nil list ignores AlwaysIgnoredOnUpdates alone;
	// DefaultIgnoreResourceUpdates holds Argo CD 3's defaults, which
	// argocdcm.Settings.Apply sets.
	IgnoreResourceUpdates []ResourceIgnoreDifferences
	// SyncWorkers bounds the sync operations that plan, dry-run, write or
	// prune at once. An operation waiting for its objects to become
	// healthy holds no slot (it reads the cluster cache, not the API
	// server), so a few slow rollouts do not stall every other app's
	// sync. Default 16, by measurement (BENCHMARKS.md, fleet section):
	// an operation's writes go kind by kind, each a round trip, so a
	// small app's sync spends most of its slot waiting on latency; 300
	// apps of 5 objects reached Synced and Healthy in 90 s with 4 slots
	// and in 40 s with 16, the client's QPS still below its limit.
	SyncWorkers int
	// RenderParallelism bounds concurrent renders. Default GOMAXPROCS.
	RenderParallelism int
	// RenderTimeout, when positive, bounds one render of one source (the
	// tool run, once the source is fetched; Argo CD's
	// controller.repo.server.timeout.seconds bounds the repo server call
	// that fetches and renders). A render past it fails with a
	// *RenderTimeoutError naming the app. Default 0: none.
	RenderTimeout time.Duration
	// QPS and Burst bound each cluster client. Default 200 and 400: a sync
	// of 1,000 objects sends about 2,000 requests (dry-run and apply), and
	// the API server's own priority and fairness protects it. A negative
	// QPS turns the client-side limit off, as in client-go's rest.Config,
	// leaving the API server's priority and fairness the only bound: a
	// cold start of 1,000 apps sends about 10,900 requests, so at the
	// default limit it takes at least 55 s whatever the cluster could do
	// (BENCHMARKS.md, issue 37).
	QPS   float32
	Burst int
	// ClusterWriteLimit, when positive, bounds the requests that change a
	// cluster (applies, creates, deletes, and their server-side dry runs)
	// in flight at once across every sync of every cluster (Argo CD's
	// controller.kubectl.parallelism.limit, 20 there). Default 0: only
	// SyncWorkers and Sync.ApplyParallelism bound them.
	ClusterWriteLimit int
	// JQTimeout bounds one jq ignoreDifferences expression on one object
	// (Argo CD's controller.ignore.normalizer.jq.timeout). Default 0: the
	// diff's own, 1 s.
	JQTimeout time.Duration
	// Impersonation says when syncs act as the service account the app's
	// project names for its destination (AppProject
	// destinationServiceAccounts): ImpersonateWhenNamed, the default;
	// ImpersonationOff (Argo CD's default: argocd-cm
	// application.sync.impersonation.enabled false); or
	// ImpersonationEnforced (enabled, and
	// application.sync.impersonation.enforced: a sync whose project names
	// none fails).
	Impersonation ImpersonationMode
	// Registerer receives the engine's metrics. Nil: none are registered.
	Registerer prometheus.Registerer
	// Log receives what the engine does.
	Log logr.Logger
	// ApplyChildApplications writes the Applications an app renders (app of
	// apps) to the cluster, for hosts whose cluster has the Application
	// CRD and its own controller. Default false: Run manages them
	// in-process and nothing is written for them.
	ApplyChildApplications bool
	// Notify, when set, is told of syncs and health changes. It is called
	// synchronously from refreshes and syncs, so it must not block: hand
	// the notification to a queue of your own (docs/recipes.md has a
	// webhook sender that drops when full). Run's reconcile workers and
	// syncs call it from several goroutines at once: guard what it shares.
	Notify func(appstatus.Notification)
	// State keeps each app's history and last operation. Default: in
	// memory (state.NewMemoryStore); state.NewConfigMapStore keeps them in
	// the cluster, so they survive restarts and other processes see them.
	State state.Store
	// ArgoMetrics also registers Argo CD's series (argocd_app_info,
	// argocd_app_sync_total, argocd_app_reconcile, argocd_git_request_total,
	// argocd_cluster_api_resource_objects) on Registerer, for dashboards
	// and alerts written for Argo CD (docs/monitoring.md).
	ArgoMetrics bool

	// Run-only settings: Run (and the add-ons beside it, such as
	// appset/controller) read them; Refresh, Sync, Render and the other
	// calls of a host that drives the engine itself do not.

	// Interval is how often each app is refreshed without other reason.
	// Default 3 minutes (zero). Negative turns periodic refreshes off (Argo
	// CD's timeout.reconciliation: 0): apps are refreshed on repository
	// hints, cluster events and retries only.
	Interval time.Duration
	// HardInterval, when positive, gives each app of Run a hard refresh
	// (Engine.HardRefresh: branches and tags resolved again and manifests
	// rendered again, past every cache) once this long has passed since
	// its last one, or since it joined Run (Argo CD's
	// timeout.hard.reconciliation). Default 0: none.
	HardInterval time.Duration
	// Jitter is the most each periodic refresh is delayed past Interval,
	// chosen at random. Zero takes the default, Interval/10; negative
	// means none.
	Jitter time.Duration
	// ReconcileWorkers bounds concurrent refreshes. Default 10.
	ReconcileWorkers int
	// Sharder, when set, spreads the apps of Run over replicas: this
	// engine reconciles only the apps the Sharder says it owns, and picks
	// up or lets go of apps as ownership moves. A Sharder with a
	// Run(context.Context) error method (shard.Membership) is run by
	// Engine.Run for its lifetime. Nil: this engine owns every app.
	Sharder Sharder
}

// ImpersonationMode says when syncs impersonate a service account
// (Options.Impersonation).
type ImpersonationMode string

// Impersonation modes.
const (
	// ImpersonateWhenNamed impersonates the service account the app's
	// project names for its destination, and syncs with the cluster's own
	// credentials when it names none.
	ImpersonateWhenNamed ImpersonationMode = ""
	// ImpersonationOff never impersonates.
	ImpersonationOff ImpersonationMode = "off"
	// ImpersonationEnforced impersonates the named service account, and
	// fails the sync (and deletion) of an app whose project names none for
	// its destination.
	ImpersonationEnforced ImpersonationMode = "enforced"
)

// CompareStatusMode says whose status a comparison looks at.
type CompareStatusMode string

// Status comparison modes.
const (
	// CompareStatusNone ignores every object's status (the default).
	CompareStatusNone CompareStatusMode = ""
	// CompareStatusAll compares the status of every kind but
	// Options.IgnoreStatus's.
	CompareStatusAll CompareStatusMode = "all"
)

// DefaultOptions returns options with every default filled in but no
// clusters.
func DefaultOptions() Options {
	return Options{
		Tracking:           resource.DefaultTracking(),
		Cache:              cache.DefaultOptions(),
		Sync:               sync.DefaultOptions(),
		Interval:           3 * time.Minute,
		ControlNamespace:   "argocd",
		RefCacheTTL:        time.Minute,
		ClusterSyncTimeout: 2 * time.Minute,
		ReconcileWorkers:   10,
		SyncWorkers:        16,
		QPS:                200,
		Burst:              400,
		Log:                logr.Discard(),
	}
}
