// Package notify sends Argo CD style notifications: it reads the
// argocd-notifications-cm ConfigMap and argocd-notifications-secret that
// teams coming from Argo CD already have, and evaluates the same triggers,
// renders the same templates and delivers to the same services, so those
// files work unchanged.
//
// # Configuration
//
// Load (or LoadManifests, LoadFiles, LoadFromCluster) builds a Config from
// the ConfigMap's data:
//
//   - trigger.<name>: a list of conditions {when, send, oncePer,
//     description}. when and oncePer are github.com/expr-lang/expr
//     expressions, Argo CD's language, compiled once at load over Argo
//     CD's environment (Env): app (the Application as a map, with its
//     status), time (Now, Parse, the durations Nanosecond to Hour, the
//     layouts), repo (RepoURLToHTTPS, FullNameByRepoURL, QueryEscape, and
//     GetCommitMetadata and GetAppDetails through LoadOptions.Repo),
//     strings and sync.GetInfoItem.
//   - template.<name>: message and per-service blocks, read as Argo CD's
//     notifications-engine reads them (its services.Notification: email,
//     slack, mattermost, rocketchat, teams, teams-workflows,
//     webhook.<service name>, opsgenie, github, alertmanager, googlechat,
//     pagerduty, pagerdutyv2, newrelic, awssqs, gcppubsub), rendered by its
//     templaters: Go text/template with sprig (without env and expandenv),
//     with .app, .context, .recipient and .serviceType (the destination's
//     service name, as notifications-engine sets it), and the helpers as
//     .time, .repo, .strings and .sync. Two things are this package's own,
//     for a host's service: title, and any other block, rendered field by
//     field into Message.Fields.
//   - service.<type>[.<name>]: every type Argo CD documents (ServiceTypes:
//     alertmanager, awssqs, email, gcppubsub, github, googlechat, grafana,
//     mattermost, nats, newrelic, opsgenie, pagerduty, pagerdutyv2,
//     pushover, rocketchat, slack, teams, teams-workflows, telegram, webex,
//     webhook), each notifications-engine's service with its options as
//     Argo CD's docs write them. "$key" in a value is the secret's key. The
//     webhook is this package's code with notifications-engine's semantics
//     (a GET of the message to the url unless the template has a
//     webhook.<name> block; retryMax, retryWaitMin and retryWaitMax, the
//     waits also written as durations, "1s"), because notifications-engine's
//     logs each request's URL, a token in it included, to standard error.
//     Other types, or a host's replacement of one, come from
//     LoadOptions.ServiceTypes: the Service interface is the seam for a
//     host's own channels.
//   - defaultTriggers, defaultTriggers.<service>, subscriptions (with label
//     selectors) and context.
//
// Everything is checked at load: an expression that does not compile, a
// template that does not parse, a send naming no template, an unknown
// service type, an option of the wrong type, a "$key" the secret lacks, an
// unknown key: a *ConfigError (or *MissingSecretError) names the entry, and
// no secret value appears in any error, log line or metric. As in Argo CD,
// a bad trigger does not refuse the ConfigMap: Load returns the rest with a
// *SkippedError naming it; anything else bad refuses it whole. A field
// that Argo CD ignores (one a service's options or a template's block do
// not have) is ignored here too, and named by Config.Ignored.
//
// # Evaluation and delivery
//
// An Application subscribes with the annotations
// notifications.argoproj.io/subscribe.<trigger>.<service>: <recipient>[;...],
// notifications.argoproj.io/subscribe.<service> (the default triggers) and
// notifications.argoproj.io/subscriptions (a YAML list). A Controller
// evaluates the triggers an Application is subscribed to each time it
// observes it: through Observe (any Argo-shaped Application map, for
// example appstatus.Object's), or through Notify, which a host passes to
// the engine as gitops.Options.Notify, with ControllerOptions.ApplicationOf
// and StatusOf finding the app by its key (namespace and name). The
// package does not import the engine: a notification, a status and an
// Application are appstatus's and apis/v1alpha1's types. Evaluation is bounded (expression
// size, a memory budget per evaluation) and nil-safe: a condition whose
// expression fails on a missing field is false, with the reason.
//
// A matching condition sends once, as Argo CD's notifications-engine
// decides: its key (StateKey: the oncePer value, trigger, condition and
// destination) is recorded in a State. A condition without oncePer is
// forgotten when it turns false, so that its next change sends again; a
// condition with oncePer is never forgotten, so each value (a revision,
// say) is sent once for good: a self-heal sync of the same revision sends
// nothing. The oncePer value is evaluated whether or not the condition
// matches. A running host gives the Controller a durable State:
// AnnotationState keeps Argo CD's notified.notifications.argoproj.io
// annotation on each Application (DynamicAnnotations for the Application
// custom resource, or the host's own Annotations where it keeps its
// Applications), and an Argo CD that ran before left its state there;
// StoreState over Redis is the other choice. The default, MemoryState, is
// for tests and one-shot tools: a restart sends again whatever is still
// due. Observe and Notify never block: the controller's queue drops (and
// counts) rather than slow a reconcile.
//
// Deliveries run in the background, as Argo CD's notifications controller
// makes them: the templates of one condition render into one notification
// (Config.RenderAll), sent once with the service, which retries as its own
// options say (the webhook's retryMax), within ControllerOptions.SendTimeout.
// A notification is recorded in the State only once its service delivered
// it. One that failed (or did not render) is counted, logged, reported
// through ControllerOptions.OnFailure and not recorded, so that the next
// evaluation that finds it still due sends it again: the Application's next
// change, or ControllerOptions.RetryAfter (60 s, Argo CD's resync) after
// the failure, from the newest state observed. As in notifications-engine,
// GitHub's refusal of more commit statuses for a commit is not retried: it
// is recorded and reported. (Argo CD keeps a failed oncePer notification
// recorded, so never retries it; here it is retried like any other.)
// Metrics: gitops_notifications_sent_total and
// gitops_notifications_failed_total by trigger and service,
// gitops_notifications_trigger_evaluations_total,
// gitops_notifications_dropped_total.
//
// notifications-engine's services take no context: a send still running
// at its deadline is given up on and left to end by itself, at most 8 of
// them per service. Its services log through logrus's standard logger
// (errors and warnings; at debug level each request and response, headers
// included): a host that turns that logger to debug level sees secrets.
// The awssqs service ends the process when the AWS configuration does not
// load: this package loads it first and fails the send instead.
//
// # Catalog
//
// Catalog is Argo CD's catalog of triggers (on-created, on-deleted,
// on-deployed, on-health-degraded, on-sync-failed, on-sync-running,
// on-sync-status-unknown, on-sync-succeeded) and their templates, written
// from Argo CD's documented semantics. Argo CD's own catalog files (the
// current release's notifications_catalog/install.yaml, and two older ones
// in testdata/argocd) load unchanged, every trigger and template.
//
// # What the engine's notifications give
//
// Through Notify, status.operationState follows the engine's sync
// notifications and status.sync/health the engine's last status
// (ControllerOptions.StatusOf, Engine.Apps().AppStatus). The engine's Deleted
// notification (a cascading Engine.Delete that is done) sets
// metadata.deletionTimestamp, so on-deleted fires through Notify too; hosts
// that Observe an Application being deleted (a controller watching the
// custom resource) get it from the object itself.
package notify
