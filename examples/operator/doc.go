// Command operator is a Kubernetes operator built on the gitops engine with
// controller-runtime: it reconciles Argo CD Application custom resources
// (argoproj.io/v1alpha1, the subset the engine implements) of its own
// namespace and of the namespaces -application-namespaces lists (or every
// namespace with *), deploying each to the cluster the operator runs in
// (https://kubernetes.default.svc, named in-cluster) or to a cluster an
// Argo CD cluster Secret of its namespace describes (label
// argocd.argoproj.io/secret-type: cluster, as `argocd cluster add` writes
// it; read by gitops.ClusterFromSecret). The Secrets are watched: one
// added, rotated or deleted changes the engine's destinations at once
// (Engine.Settings().SetClusters) and its Applications are reconciled again; a
// Secret that cannot be read gets a Warning Event (InvalidClusterSecret)
// naming the key at fault and is left out, and the other clusters go on.
//
// The Applications are the model's type, v1alpha1.Application (package
// apis/v1alpha1, registered in the manager's scheme), read and written
// with the typed client. For every Application the reconciler (package
// controller) refreshes the app with Engine.Refresh and writes Argo CD's
// status shape back through the status subresource (sync, health,
// resources, conditions, reconciledAt, and the resource tree and summary
// of Engine.ResourceTree); syncs it when spec.syncPolicy.automated says
// so (prune, selfHeal); runs a sync requested in the top-level operation
// field once, records it in status.operationState and status.history, and
// removes the field; and honours Argo CD's resources finalizers: deleting
// an Application that carries one deletes the objects it manages first
// (Engine.Delete), while without one the objects stay. The
// argocd.argoproj.io/deletion-approved annotation (an RFC 3339 time at or
// after the wait began) confirms Prune=confirm and Delete=confirm. With
// -state-namespace, sync checkpoints live in ConfigMaps there, and a
// restarted operator resumes a sync it was killed in before the app's
// first refresh (Engine.Resume).
//
// It also serves ApplicationSet custom resources in the same namespaces
// (package appsets; -applicationsets=false turns it off), as Argo CD's
// ApplicationSet controller does: each set's generators are run with the
// engine's sources and credentials, and the Applications they generate
// are created, updated and deleted as custom resources owned by the set
// (spec.syncPolicy.applicationsSync, preserveResourcesOnDeletion,
// ignoreApplicationDifferences), which the Application reconciler then
// deploys; a RollingSync strategy syncs them step by step by writing their
// operation field, and the set's status reports conditions, resources and
// the rollout. Deleting a set deletes its Applications by garbage
// collection.
//
// The AppProject custom resources of -namespace are the engine's projects
// (controller.Projects, Engine.Settings().SetProjects), read again whenever one
// changes, without a restart: their rules (source repositories,
// destinations, sourceNamespaces, resource allow and deny lists, by name
// too for cluster-scoped ones, sync windows, orphanedResources warnings,
// permitOnlyProjectScopedClusters, sourceIntegrity and signatureKeys)
// apply to the apps naming them, with Argo CD's messages. An Application
// naming a project that does not exist gets Argo CD's InvalidSpecError
// condition and is not synced until the project appears; a project that
// sets a field the engine does not implement is refused by name, and its
// apps report why. A role's jwtTokens (project tokens, which Argo CD's API
// server issues and checks; examples/portal honours them) are kept and named once in a Normal Event
// with reason UnusedField on the AppProject. Without an AppProject named
// default, the implicit default project allows everything, Applications
// of every namespace included. A set generating an Application for a
// missing project does not write it and reports the error (ErrorOccurred,
// ApplicationValidationError).
//
// Cluster Secrets of -namespace are the destinations (clusters.go); one
// whose project key names a project is scoped to it, as in Argo CD (its
// namespaces are the project's implicit destinations, and the only
// clusters of a project with permitOnlyProjectScopedClusters are those
// scoped to it). The GnuPG public keys of argocd-gpg-keys-cm in
// -namespace (gpgkeys.go) are the keys the signatures of synced commits
// and tags are verified against, for the apps of projects with source
// integrity criteria: read before the first reconcile and watched, a key
// added or removed applies at once; an entry that cannot be read is left
// out and named by a Warning Event with reason InvalidGnuPGKey. An app
// whose revision fails the criteria gets Argo CD's ComparisonError
// condition ("GIT/GPG: Failed verifying revision ...") and is not synced.
//
// Its defaults are Argo CD's: the engine starts from argocdcm.Defaults
// (so a sync succeeds once its last wave is written, and a Deployment
// turning Degraded afterwards shows in the app's health, not as a failed
// sync; waves are 2 s apart), and -workers defaults to 20, Argo CD's
// controller.status.processors. A change of an app's resource tree alone
// (Pods and ReplicaSets appearing after a sync) within -tree-write-delay
// (10 s) of its last status write is written with its next change, or at
// the end of that delay, not once each (controller.Options.TreeWriteDelay).
// It reads argocd-cm and
// argocd-cmd-params-cm of -namespace at start (settings.go; a missing one
// is empty) and watches them. Every key is looked up in argocdcm's tables
// (argocdcm.SettingKeys, argocdcm.ParamKeys), which say what the operator
// does with each: the keys of the four Argo CD components it plays
// (application controller, repo server, ApplicationSet and notifications
// controllers) are applied as Argo CD defines them, or named as
// meaningless here (a repo server's gRPC endpoint and TLS, Redis, another
// component's profiling) or not implemented; the keys of the API server,
// the web UI, Dex and the commit server are named as theirs. A flag given
// on the command line wins over both ConfigMaps (-interval, -workers,
// -application-namespaces, -instance-id, -v).
//
// Everything it reads of argocd-cm applies live: a change is put into the
// running engine (gitops.Engine.Settings().Reconfigure: health and action scripts,
// ignore rules, compare options, tracking, installationID, impersonation,
// the renderers' options; resource.exclusions and resource.inclusions make
// the cluster caches list their kinds again), the reconciler's timing
// (timeout.reconciliation, timeout.hard.reconciliation) and the
// destinations (cluster.inClusterEnabled), and every app is reconciled
// again. Of argocd-cmd-params-cm, the keys the table marks live apply at
// once too (controller.log.level and .format set the log, and the
// ApplicationSet and notifications log levels theirs;
// controller.metrics.* the labels of argocd_app_labels, argocd_app_condition
// and argocd_cluster_labels; the self-heal backoff; the sync's timeout and
// wave delay; the write limit; client QPS and burst); the others take
// effect when the operator restarts, as Argo CD's components read them when
// they start, and a change of one gets a RestartNeeded Event naming it.
// Each change of a ConfigMap (and the start) is reported once, one Event
// per kind of finding naming every key it is about: InvalidSetting for
// malformed values, UnsupportedSetting for values asking for what the
// operator does not do, UnusedSetting for keys that set nothing here
// (grouped by why); the rest apply, and the operator runs on.
//
// It writes nothing before it holds what it needs (startup.go): it binds
// its metrics and health probe addresses first, so that a second operator
// started on the same addresses exits at once, naming the address, having
// read and written nothing; it then holds the Lease gitops-operator of
// -namespace before anything else (a second one waits for it, saying so in
// its log and a NotActing Event unless started with -leader-elect); only
// then does it install its CRDs and start its controllers, each of which
// writes once its cache has synced; /readyz answers then.
//
// With -shard (or ARGOCD_CONTROLLER_REPLICAS above 1), several operators
// act at once, sharing the Applications through package shard's Leases
// (shards.go): each reconciles its share and writes its name in an app's
// shard.kubegitops.io/owner annotation; the member holding gitops-operator
// runs what runs once (ApplicationSets, notifications, image updates,
// hydration); a sharded member waits while an operator outside its group
// holds that Lease, and says so. -redis-addr, else argocd-cmd-params-cm's
// redis.server, keeps their rendered manifests in a shared Redis. Apps go
// to members one by one; with ARGOCD_CONTROLLER_REPLICAS (-replicas) above
// 1 they go instead by destination cluster, as Argo CD's controller places
// them (placement.go): controller.sharding.algorithm, a cluster Secret's
// shard field, the replica's number from ARGOCD_CONTROLLER_SHARD or its
// Pod name. With ARGOCD_ENABLE_DYNAMIC_CLUSTER_DISTRIBUTION the count is
// the controller Deployment's spec.replicas and the number is claimed, with
// heartbeats, in the ConfigMap argocd-app-controller-shard-cm
// (placement_dynamic.go). Each member serves gitops_shard_* metrics
// (shardmetrics.go).
//
// It delivers Argo CD notifications (notifications.go; -notifications=false
// turns it off), as Argo CD's notifications controller does: while
// argocd-notifications-cm exists in -namespace, it and
// argocd-notifications-secret are loaded with package notify and loaded
// again whenever either changes (watched, no restart). Every change of an
// Application the operator serves (the status its reconciler writes, the
// annotations) is evaluated against the triggers the Application
// subscribes to (notifications.argoproj.io/subscribe.* annotations, the
// ConfigMap's subscriptions and defaultTriggers), and what was sent is kept
// in the Application's notified.notifications.argoproj.io annotation, so a
// restarted operator sends nothing again. Every service type Argo CD
// documents delivers, with Argo CD's notifications-engine (webhook, slack,
// email, teams, teams-workflows, opsgenie, pagerduty, pagerdutyv2, github,
// googlechat, mattermost, rocketchat, telegram, grafana, alertmanager,
// webex, pushover, newrelic, awssqs, gcppubsub, nats). A notification is
// recorded only once delivered; one that fails is a Warning Event with
// reason NotificationDeliveryFailed on the Application, naming the
// trigger, template, destination and the service's error, and is sent
// again by the next evaluation of the Application (its next change, or a
// minute later). A key of the ConfigMap that is bad (a template that does
// not parse, a trigger that does not compile, a service missing its
// secret, ...) is left out and reported, by a log line and a Warning Event
// with reason InvalidNotificationConfig on the ConfigMap naming the key;
// the other keys deliver. A field Argo CD ignores (one a service's options
// or a template's block do not have) is ignored and named by the same
// Event.
//
// It runs Argo CD Image Updater continuously (imageupdates.go, package
// imageupdate; -image-update-interval, default 2m as Image Updater's
// --interval, 0 turns it off; on the leader only): every interval the
// Applications served that carry argocd-image-updater.argoproj.io/image-list
// are checked (imageupdate/controller.AppOf renders them, imageupdate.Updater
// scans the registries once per image and interval). Write-back method
// argocd merges the override into the custom resource's spec.source
// (kustomize images or Helm parameters, imageupdate/controller.WithOverride); method
// git commits to the repository with the credentials of the Argo CD
// repository Secrets of -namespace (as the refreshes use them, see below) and
// sets argocd.argoproj.io/refresh: hard on the Application, so it syncs
// the commit at once. A spec that already holds the images, or a
// repository that already has them, is not written again. A failure is
// logged and a Warning Event ImageUpdateFailed on the Application names
// it; an update writes a Normal Event ImagesUpdated; the other apps go on.
//
// It runs Argo CD's source hydrator (hydrations.go, package hydrator)
// when argocd-cmd-params-cm hydrator.enabled is "true" (read at start, as
// Argo CD reads it; -hydrator-interval, default 3m, 0 turns it off; on the
// leader only):
// every interval the Applications with spec.sourceHydrator are grouped by
// dry source and revision and by the branch hydrated to, each group's dry
// commit is rendered by the engine and committed once with Argo CD's
// layout (manifest.yaml, hydrator.metadata, README.md, the
// hydrator.metadata git note), pushed with the repository-write and
// repo-write-creds Secrets of -namespace only, and status.sourceHydrator
// is written (Hydrated with the dry and hydrated commits, or Failed with
// the reason, also a Warning Event HydrationFailed). After a new hydrated
// commit the app gets argocd.argoproj.io/refresh: hard and syncs it. A dry
// commit that changes nothing rendered makes no commit. argocd-cm's
// sourceHydrator.commitMessageTemplate, sourceHydrator.readmeMessageTemplate
// and commit.author.name/email apply, a change of them from the next
// hydrated commit on (one that does not parse is logged and the ones in
// force stay). While hydrator.enabled is off, an app with
// spec.sourceHydrator gets one Warning Event HydratorDisabled and syncs
// from its sync source as it is.
//
// It reads Argo CD's repository Secrets (repositories.go, package
// source/repocreds): the Secrets of -namespace labelled
// argocd.argoproj.io/secret-type repository or repo-creds, with
// argocd-tls-certs-cm and argocd-ssh-known-hosts-cm, are read at start and
// watched; a Secret created, changed or deleted takes effect at the next
// refresh of each app (the engine's Options.ProjectCredentials reads a
// repocreds.Live set that every change replaces), without a restart. A
// Secret with a project field serves the apps of that project only (Argo
// CD's project-scoped repositories). A
// Secret that cannot be read (a field Argo CD does not define, one this
// library does not implement, a malformed value) is left out, named in a
// log line and a Warning Event InvalidRepositorySecret on it; the others
// are served.
//
// It decrypts SOPS files (sops.go) when -sops, -sops-age-key-file or
// -sops-age-key-secret is given: the age keys of files and of a Secret of
// -namespace (its keys.txt entry, as KSOPS users mount it, and every
// *.agekey entry, Flux's convention; read at start) are handed to
// gitops-sops, the program of the github.com/kubegitops/gitops/sops
// module, which render/execdecrypt runs for each encrypted file (the
// operator itself does not link SOPS's cloud SDKs; the Secret's keys reach
// the program through its environment, never the disk). Encrypted plain
// manifests, Kustomize resources and secretGenerator sources and
// helm-secrets value files render decrypted; a file that does not decrypt
// is a ComparisonError naming it. A missing key Secret is logged naming
// it, and the operator runs on. The KSOPS generator (generators: of kind
// ksops) is refused naming its file, with what to write instead.
//
// The CustomResourceDefinitions (applications.argoproj.io,
// applicationsets.argoproj.io and appprojects.argoproj.io) are in config/ (installed at start with
// -install-crd), generated from the model's Go types: the API server prunes
// fields the engine does not implement (strict field validation refuses
// them, naming each), and a spec Application.Validate refuses is an
// InvalidSpecError condition. Run it against the current kubeconfig:
//
//	go run ./examples/operator -namespace argocd
//
// and create Applications in that namespace whose destination is
// https://kubernetes.default.svc (or name in-cluster), or ApplicationSets
// that generate them.
package main
