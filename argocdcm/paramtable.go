package argocdcm

import "slices"

// Component lists of the table.
var (
	ctrl    = []Component{ApplicationController}
	repo    = []Component{RepoServer}
	appsets = []Component{ApplicationSetController}
	notif   = []Component{NotificationsController}
	ctrlRS  = []Component{ApplicationController, RepoServer}
)

// Reasons shared by several keys.
const (
	noRepoServer    = "renders run in this program: there is no repo server to connect to"
	noRepoServerTLS = "the repo server's own endpoint (listener, TLS): renders run in this program, which serves no repo server endpoint"
	noRedis         = "this program keeps its caches in memory; only the rendered manifests of sharded replicas go to Redis (redis.server), with go-redis's defaults"
	noGRPC          = "gRPC service config lookups: this program makes no gRPC calls"
	oneClient       = "this program shares one Kubernetes client: controller.k8s.* set it"
	oneLog          = "this program has one log: controller.log.level and controller.log.format set it"
	noProfile       = "profiling: controller.profile.enabled serves this program's profile"
	noStreaming     = "manifests streamed to a repo server (argocd app sync --local): this program receives none"
	appStateInMem   = "this program keeps app state in memory and in each Application's status, with no expiring cache"
	noHydrator      = "the source hydrator commits in process, without Argo CD's commit server"
	noOTLP          = "this program exports no OpenTelemetry traces (otlp.address)"
	noSubmodules    = "Git submodules are never fetched: a submodule is an empty folder"
	noProcessors    = "-workers and controller.status.processors bound the operator's reconciles"
)

// ParamKeys is the table of argocd-cmd-params-cm: every key Argo CD
// v3.6's components read from it (the docs' argocd-cmd-params-cm.yaml and
// the components' manifests), with what this module's operator does with
// each, sorted by name. A key not in it is refused as unknown when it is
// of a component the operator plays (controller., reposerver.,
// applicationsetcontroller., notificationscontroller.), and named as
// another component's otherwise.
func ParamKeys() []Key {
	k := slices.Clone(paramKeys)
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

// LookupParam returns the table's entry of an argocd-cmd-params-cm key.
func LookupParam(name string) (Key, bool) { return lookup(paramKeys, name) }

var paramKeys = []Key{
	// Read by several components.
	{Name: "application.namespaces", Components: []Component{ApplicationController, NotificationsController}, Use: UseApplied,
		Effect: "the other namespaces (names, or * for every one) whose Applications are served (-application-namespaces), with their ApplicationSets"},
	{Name: "log.format.timestamp", Components: Played, Use: UseApplied, Effect: "the time format of the log's timestamps", Live: true},
	{Name: "repo.server", Components: []Component{ApplicationController, ApplicationSetController}, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "commit.server", Components: ctrl, Use: UseNotImplemented, Effect: noHydrator},
	{Name: "hydrator.enabled", Components: ctrl, Use: UseApplied, Effect: "runs the source hydrator for apps with spec.sourceHydrator (package hydrator)"},
	{Name: "redis.server", Components: ctrlRS, Use: UseApplied,
		Effect: "the Redis where the replicas of a sharded operator (-shard) share rendered manifests, unless -redis-addr is given; one unsharded operator keeps them in memory"},
	{Name: "redis.sentinel.hosts", Components: ctrlRS, Use: UseMeaningless, Effect: noRedis},
	{Name: "redis.sentinel.master", Components: ctrlRS, Use: UseMeaningless, Effect: noRedis},
	{Name: "redis.compression", Components: ctrlRS, Use: UseMeaningless, Effect: noRedis},
	{Name: "redis.db", Components: ctrlRS, Use: UseMeaningless, Effect: noRedis},
	{Name: "redis.key.prefix", Components: ctrlRS, Use: UseMeaningless, Effect: noRedis},
	{Name: "otlp.address", Components: ctrlRS, Use: UseNotImplemented, Same: "", Effect: noOTLP},
	{Name: "otlp.insecure", Components: ctrlRS, Use: UseMeaningless, Effect: noOTLP},
	{Name: "otlp.headers", Components: ctrlRS, Use: UseMeaningless, Effect: noOTLP},
	{Name: "otlp.attrs", Components: ctrlRS, Use: UseMeaningless, Effect: noOTLP},
	{Name: "otlp.sample.ratio", Components: ctrlRS, Use: UseMeaningless, Effect: noOTLP},

	// The application controller.
	{Name: "controller.status.processors", Components: ctrl, Use: UseApplied, Effect: "the Applications reconciled at once (-workers)"},
	{Name: "controller.operation.processors", Components: ctrl, Use: UseApplied, Effect: "the sync operations run at once (the engine's SyncWorkers)"},
	{Name: "controller.hydration.processors", Components: ctrl, Use: UseMeaningless, Effect: noHydrator},
	{Name: "controller.repo.server.timeout.seconds", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the bound of one render of one source (the engine's RenderTimeout)"},
	{Name: "controller.repo.server.plaintext", Components: ctrl, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "controller.repo.server.strict.tls", Components: ctrl, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "controller.repo.server.ca.cert.path", Components: ctrl, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "controller.repo.server.client.cert.path", Components: ctrl, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "controller.repo.server.client.cert.key.path", Components: ctrl, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "controller.repo.error.grace.period.seconds", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "how long a failing render leaves an app's status as it was (a hard refresh reports it at once; not set: at once)"},
	{Name: "controller.log.format", Components: ctrl, Use: UseApplied, Live: true, Effect: "the log's format (text or json)"},
	{Name: "controller.log.level", Components: ctrl, Use: UseApplied, Live: true, Effect: "the log's level (debug, info, warn or error)"},
	{Name: "controller.metrics.cache.expiration", Components: ctrl, Use: UseMeaningless,
		Effect: "the operator's app series are computed from the Applications it serves at each scrape: a deleted app's series go at once"},
	{Name: "controller.metrics.application.labels", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the Application labels of argocd_app_labels (label_<name>)"},
	{Name: "controller.metrics.application.conditions", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the condition types of argocd_app_condition"},
	{Name: "controller.metrics.cluster.labels", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the cluster Secret labels of argocd_cluster_labels (label_<name>)"},
	{Name: "controller.self.heal.timeout.seconds", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the fixed wait between two self-heals of one app, when controller.self.heal.backoff.timeout.seconds is 0"},
	{Name: "controller.self.heal.backoff.timeout.seconds", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the first wait of the self-heal backoff (0: the fixed controller.self.heal.timeout.seconds)"},
	{Name: "controller.self.heal.backoff.factor", Components: ctrl, Use: UseApplied, Live: true, Effect: "the self-heal backoff's factor"},
	{Name: "controller.self.heal.backoff.cap.seconds", Components: ctrl, Use: UseApplied, Live: true, Effect: "the self-heal backoff's longest wait"},
	{Name: "controller.self.heal.backoff.cooldown.seconds", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "how long after an app's last automated sync its self-heal backoff starts again"},
	{Name: "controller.sync.timeout.seconds", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the bound of one sync operation, which ends it (0: none)"},
	{Name: "controller.sync.wave.delay.seconds", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the wait between a sync's waves, once a wave is healthy"},
	{Name: "controller.app.state.cache.expiration", Components: ctrl, Use: UseMeaningless, Effect: appStateInMem},
	{Name: "controller.default.cache.expiration", Components: ctrl, Use: UseMeaningless, Effect: appStateInMem},
	{Name: "controller.resource.health.persist", Components: ctrl, Use: UseMeaningless,
		Effect: "each resource's health is always written in status.resources: there is no Redis-backed resource tree for an API server to read it from"},
	{Name: "controller.sharding.algorithm", Components: ctrl, Use: UseApplied,
		Effect: "with $ARGOCD_CONTROLLER_REPLICAS above 1, each replica acts on the apps of the clusters this algorithm places on it, as Argo CD's controller does (package shard's ClusterShards); one operator serves every cluster, as each algorithm does with one replica"},
	{Name: "controller.kubectl.parallelism.limit", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the cluster writes in flight at once across all syncs (the engine's ClusterWriteLimit; below 1: no limit)"},
	{Name: "controller.k8sclient.retry.max", Components: ctrl, Use: UseApplied,
		Effect: "the retries of a Kubernetes request that fails transiently"},
	{Name: "controller.k8sclient.retry.base.backoff", Components: ctrl, Use: UseApplied,
		Effect: "the first wait, in ms, before a Kubernetes request is retried (doubling)"},
	{Name: "controller.diff.server.side", Components: ctrl, Use: UseApplied, Live: true, Effect: "server-side diff for every app (the engine's ServerSideDiff)"},
	{Name: "controller.profile.enabled", Components: ctrl, Use: UseApplied, Effect: "Go's profile (/debug/pprof/) on the metrics endpoint"},
	{Name: "controller.cluster.cache.batch.events.processing", Components: ctrl, Use: UseMeaningless,
		Effect: "the cluster caches apply each watch event as it comes; the refreshes events ask for are merged per app by the work queue"},
	{Name: "controller.cluster.cache.events.processing.interval", Components: ctrl, Use: UseMeaningless,
		Effect: "the cluster caches apply each watch event as it comes; the refreshes events ask for are merged per app by the work queue"},
	{Name: "controller.k8s.client.qps", Components: ctrl, Use: UseApplied, Live: true, Effect: "the QPS of every Kubernetes client (the engine's QPS)"},
	{Name: "controller.k8s.client.burst", Components: ctrl, Use: UseApplied, Live: true, Effect: "the burst of every Kubernetes client (the engine's Burst)"},
	{Name: "controller.k8s.client.max.idle.connections", Components: ctrl, Use: UseApplied, Effect: "the idle connections kept by each Kubernetes client's transport"},
	{Name: "controller.k8s.tcp.timeout", Components: ctrl, Use: UseApplied, Effect: "the dial timeout of every Kubernetes client"},
	{Name: "controller.k8s.tcp.keepalive", Components: ctrl, Use: UseApplied, Effect: "the TCP keep-alive of every Kubernetes client"},
	{Name: "controller.k8s.tls.handshake.timeout", Components: ctrl, Use: UseApplied, Effect: "the TLS handshake timeout of every Kubernetes client"},
	{Name: "controller.k8s.tcp.idle.timeout", Components: ctrl, Use: UseApplied, Effect: "how long an idle connection of a Kubernetes client is kept"},
	{Name: "controller.grpc.enable.txt.service.config", Components: ctrl, Use: UseMeaningless, Effect: noGRPC},
	{Name: "controller.ignore.normalizer.jq.timeout", Components: ctrl, Use: UseApplied, Live: true,
		Effect: "the bound of one jq ignoreDifferences expression on one object (the engine's JQTimeout)"},

	// The repo server.
	{Name: "reposerver.parallelism.limit", Components: repo, Use: UseApplied, Effect: "the renders run at once (the engine's RenderParallelism; below 1: no limit)"},
	{Name: "reposerver.listen.address", Components: repo, Use: UseMeaningless, Effect: noRepoServerTLS},
	{Name: "reposerver.metrics.listen.address", Components: repo, Use: UseMeaningless, Effect: "renders' metrics are on the operator's -metrics-bind-address"},
	{Name: "reposerver.log.format", Components: repo, Use: UseMeaningless, Effect: oneLog},
	{Name: "reposerver.log.level", Components: repo, Use: UseMeaningless, Effect: oneLog},
	{Name: "reposerver.disable.tls", Components: repo, Use: UseMeaningless, Effect: noRepoServerTLS},
	{Name: "reposerver.tls.minversion", Components: repo, Use: UseMeaningless, Effect: noRepoServerTLS},
	{Name: "reposerver.tls.maxversion", Components: repo, Use: UseMeaningless, Effect: noRepoServerTLS},
	{Name: "reposerver.tls.ciphers", Components: repo, Use: UseMeaningless, Effect: noRepoServerTLS},
	{Name: "reposerver.tls.curvepreferences", Components: repo, Use: UseMeaningless, Effect: noRepoServerTLS},
	{Name: "reposerver.client.ca.path", Components: repo, Use: UseMeaningless, Effect: noRepoServerTLS},
	{Name: "reposerver.repo.cache.expiration", Components: repo, Use: UseMeaningless,
		Effect: "renders are cached by content (commit, path and options), which never goes stale; the cache is bounded by size"},
	{Name: "reposerver.default.cache.expiration", Components: repo, Use: UseMeaningless,
		Effect: "renders are cached by content (commit, path and options), which never goes stale; the cache is bounded by size"},
	{Name: "reposerver.revision.cache.lock.timeout", Components: repo, Use: UseMeaningless,
		Effect: "concurrent renders of one revision share one render in this process, with no Redis lock"},
	{Name: "reposerver.max.combined.directory.manifests.size", Components: repo, Use: UseApplied,
		Effect: "the bytes one directory (plain manifests) render may read"},
	{Name: "reposerver.plugin.tar.exclusions", Components: repo, Use: UseNotImplemented, Same: "",
		Effect: "config management plugins read the source folder in place; no tarball is streamed to them"},
	{Name: "reposerver.plugin.use.manifest.generate.paths", Components: repo, Use: UseNotImplemented, Same: "false",
		Effect: "plugins are given the whole repository, not only the manifest-generate-paths"},
	{Name: "reposerver.allow.oob.symlinks", Components: repo, Use: UseNotImplemented, Same: "false",
		Effect: "a symlink out of the repository is always refused"},
	{Name: "reposerver.streamed.manifest.max.tar.size", Components: repo, Use: UseMeaningless, Effect: noStreaming},
	{Name: "reposerver.streamed.manifest.max.extracted.size", Components: repo, Use: UseMeaningless, Effect: noStreaming},
	{Name: "reposerver.oci.manifest.max.extracted.size", Components: repo, Use: UseNotImplemented, Same: "",
		Effect: "OCI artifacts are bounded by the render limits (64 MiB read per render)"},
	{Name: "reposerver.disable.oci.manifest.max.extracted.size", Components: repo, Use: UseNotImplemented, Same: "false",
		Effect: "OCI artifacts are bounded by the render limits (64 MiB read per render)"},
	{Name: "reposerver.oci.layer.media.types", Components: repo, Use: UseNotImplemented, Same: "",
		Effect: "OCI sources read Helm chart layers only"},
	{Name: "reposerver.helm.manifest.max.extracted.size", Components: repo, Use: UseNotImplemented, Same: "",
		Effect: "Helm charts are bounded by the render limits (64 MiB read per render)"},
	{Name: "reposerver.disable.helm.manifest.max.extracted.size", Components: repo, Use: UseNotImplemented, Same: "false",
		Effect: "Helm charts are bounded by the render limits (64 MiB read per render)"},
	{Name: "reposerver.helm.user.agent", Components: repo, Use: UseNotImplemented, Same: "",
		Effect: "chart repositories are asked with Helm's own user agent"},
	{Name: "reposerver.enable.git.submodule", Components: repo, Use: UseNotImplemented, Same: "false", Effect: noSubmodules},
	{Name: "reposerver.git.lsremote.parallelism.limit", Components: repo, Use: UseMeaningless,
		Effect: "the refs of one repository are asked once per minute and shared by all its apps, so ls-remote calls are few"},
	{Name: "reposerver.git.request.timeout", Components: repo, Use: UseNotImplemented, Same: "",
		Effect: "each Git request is bounded by 90 s"},
	{Name: "reposerver.enable.builtin.git.config", Components: repo, Use: UseMeaningless,
		Effect: "Git runs in this program (go-git), with no git configuration to write"},
	{Name: "reposerver.include.hidden.directories", Components: repo, Use: UseNotImplemented, Same: "false",
		Effect: "a directory render skips folders whose name starts with a dot"},
	{Name: "reposerver.grpc.enable.txt.service.config", Components: repo, Use: UseMeaningless, Effect: noGRPC},
	{Name: "reposerver.grpc.max.size", Components: repo, Use: UseMeaningless, Effect: noGRPC},
	{Name: "reposerver.profile.enabled", Components: repo, Use: UseMeaningless, Effect: noProfile},

	// The ApplicationSet controller.
	{Name: "applicationsetcontroller.enable.leader.election", Components: appsets, Use: UseMeaningless,
		Effect: "the operator's -leader-elect covers all it serves"},
	{Name: "applicationsetcontroller.policy", Components: appsets, Use: UseApplied,
		Effect: "what every set may do to its Applications (create-only, create-update, create-delete, sync)"},
	{Name: "applicationsetcontroller.enable.policy.override", Components: appsets, Use: UseApplied,
		Effect: "whether a set's spec.syncPolicy.applicationsSync wins over applicationsetcontroller.policy"},
	{Name: "applicationsetcontroller.concurrent.reconciliations.max", Components: appsets, Use: UseApplied, Effect: "the sets reconciled at once"},
	{Name: "applicationsetcontroller.enable.new.git.file.globbing", Components: appsets, Use: UseNotImplemented, Same: "true",
		Effect: "the git files generator always globs as Argo CD's new globbing does (** spans folders)"},
	{Name: "applicationsetcontroller.debug", Components: appsets, Use: UseApplied, Live: true, Effect: "debug level for the ApplicationSet log"},
	{Name: "applicationsetcontroller.log.format", Components: appsets, Use: UseMeaningless, Effect: oneLog},
	{Name: "applicationsetcontroller.log.level", Components: appsets, Use: UseApplied, Live: true, Effect: "the ApplicationSet log's level"},
	{Name: "applicationsetcontroller.dryrun", Components: appsets, Use: UseApplied,
		Effect: "sets are generated and reported but no Application is written"},
	{Name: "applicationsetcontroller.enable.git.submodule", Components: appsets, Use: UseNotImplemented, Same: "false", Effect: noSubmodules},
	{Name: "applicationsetcontroller.enable.progressive.syncs", Components: appsets, Use: UseApplied,
		Effect: "RollingSync strategies (off: a set's strategy is ignored, as in Argo CD)"},
	{Name: "applicationsetcontroller.namespaces", Components: appsets, Use: UseApplied,
		Effect: "the namespaces (globs) whose ApplicationSets are served, among those whose Applications are"},
	{Name: "applicationsetcontroller.scm.root.ca.path", Components: appsets, Use: UseApplied,
		Effect: "the CA file whose certificates SCM providers trust besides the system's"},
	{Name: "applicationsetcontroller.allowed.scm.providers", Components: appsets, Use: UseApplied,
		Effect: "the only custom API URLs scmProvider and pullRequest generators may name"},
	{Name: "applicationsetcontroller.enable.scm.providers", Components: appsets, Use: UseApplied,
		Effect: "whether scmProvider and pullRequest generators run (false: they fail, naming it)"},
	{Name: "applicationsetcontroller.webhook.parallelism.limit", Components: appsets, Use: UseNotImplemented, Same: "",
		Effect: "the ApplicationSet webhook (-applicationset-webhook-bind-address) handles each request as it comes"},
	{Name: "applicationsetcontroller.requeue.after", Components: appsets, Use: UseApplied, Effect: "how often a set is generated again without other reason"},
	{Name: "applicationsetcontroller.enable.tokenref.strict.mode", Components: appsets, Use: UseApplied,
		Effect: "tokenRef Secrets must be labelled argocd.argoproj.io/secret-type: scm-creds"},
	{Name: "applicationsetcontroller.global.preserved.annotations", Components: appsets, Use: UseApplied,
		Effect: "annotations of generated Applications a set's update keeps"},
	{Name: "applicationsetcontroller.global.preserved.labels", Components: appsets, Use: UseApplied,
		Effect: "labels of generated Applications a set's update keeps"},
	{Name: "applicationsetcontroller.enable.github.api.metrics", Components: appsets, Use: UseNotImplemented, Same: "false",
		Effect: "the GitHub provider reports no API metrics"},
	{Name: "applicationsetcontroller.status.max.resources.count", Components: appsets, Use: UseApplied,
		Effect: "the most resources a set's status lists"},
	{Name: "applicationsetcontroller.profile.enabled", Components: appsets, Use: UseMeaningless, Effect: noProfile},
	{Name: "applicationsetcontroller.wq.bucket.size", Components: appsets, Use: UseApplied, Effect: "the sets' work queue rate limiter: bucket size"},
	{Name: "applicationsetcontroller.wq.bucket.qps", Components: appsets, Use: UseApplied, Effect: "the sets' work queue rate limiter: bucket QPS"},
	{Name: "applicationsetcontroller.wq.basedelay.ns", Components: appsets, Use: UseApplied, Effect: "the sets' work queue rate limiter: first retry delay"},
	{Name: "applicationsetcontroller.wq.maxdelay.ns", Components: appsets, Use: UseApplied, Effect: "the sets' work queue rate limiter: longest retry delay"},
	{Name: "applicationsetcontroller.wq.backoff.factor", Components: appsets, Use: UseApplied, Effect: "the sets' work queue rate limiter: backoff factor"},
	{Name: "applicationsetcontroller.wq.cooldown.ns", Components: appsets, Use: UseNotImplemented, Same: "0",
		Effect: "a set's retry delay starts again only after it succeeds"},
	{Name: "applicationsetcontroller.k8s.client.qps", Components: appsets, Use: UseMeaningless, Effect: oneClient},
	{Name: "applicationsetcontroller.k8s.client.burst", Components: appsets, Use: UseMeaningless, Effect: oneClient},
	{Name: "applicationsetcontroller.k8s.client.max.idle.connections", Components: appsets, Use: UseMeaningless, Effect: oneClient},
	{Name: "applicationsetcontroller.k8s.tcp.timeout", Components: appsets, Use: UseMeaningless, Effect: oneClient},
	{Name: "applicationsetcontroller.k8s.tcp.keepalive", Components: appsets, Use: UseMeaningless, Effect: oneClient},
	{Name: "applicationsetcontroller.k8s.tls.handshake.timeout", Components: appsets, Use: UseMeaningless, Effect: oneClient},
	{Name: "applicationsetcontroller.k8s.tcp.idle.timeout", Components: appsets, Use: UseMeaningless, Effect: oneClient},
	{Name: "applicationsetcontroller.grpc.enable.txt.service.config", Components: appsets, Use: UseMeaningless, Effect: noGRPC},
	{Name: "applicationsetcontroller.repo.server.plaintext", Components: appsets, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "applicationsetcontroller.repo.server.strict.tls", Components: appsets, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "applicationsetcontroller.repo.server.timeout.seconds", Components: appsets, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "applicationsetcontroller.repo.server.ca.cert.path", Components: appsets, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "applicationsetcontroller.repo.server.client.cert.path", Components: appsets, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "applicationsetcontroller.repo.server.client.cert.key.path", Components: appsets, Use: UseMeaningless, Effect: noRepoServer},

	// The notifications controller.
	{Name: "notificationscontroller.log.level", Components: notif, Use: UseApplied, Live: true, Effect: "the notifications log's level"},
	{Name: "notificationscontroller.log.format", Components: notif, Use: UseMeaningless, Effect: oneLog},
	{Name: "notificationscontroller.processors.count", Components: notif, Use: UseApplied, Effect: "the notifications delivered at once"},
	{Name: "notificationscontroller.selfservice.enabled", Components: notif, Use: UseNotImplemented, Same: "false",
		Effect: "notifications are configured by argocd-notifications-cm of the operator's namespace only"},
	{Name: "notificationscontroller.repo.server.plaintext", Components: notif, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "notificationscontroller.repo.server.ca.cert.path", Components: notif, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "notificationscontroller.repo.server.client.cert.path", Components: notif, Use: UseMeaningless, Effect: noRepoServer},
	{Name: "notificationscontroller.repo.server.client.cert.key.path", Components: notif, Use: UseMeaningless, Effect: noRepoServer},

	// Components this module does not play.
	{Name: "server.", Components: []Component{APIServer}, Use: UseOtherComponent},
	{Name: "dexserver.", Components: []Component{Dex}, Use: UseOtherComponent},
	{Name: "commitserver.", Components: []Component{CommitServer}, Use: UseOtherComponent},
}
