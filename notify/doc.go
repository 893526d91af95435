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
//   - template.<name>: message, title and per-service blocks (email.subject;
//     slack.attachments/blocks/groupingKey/notifyBroadcast/deliveryPolicy;
//     webhook.<service>.method/path/body; any other block as fields for a
//     host's service), Go text/template with sprig (without env and
//     expandenv), with .app, .context, .serviceType and .recipient, and
//     the helpers as .time, .repo, .strings and .sync.
//   - service.<type>[.<name>]: webhook (url, headers, basicAuth,
//     insecureSkipVerify), slack (token, apiURL, username, icon: Slack's
//     chat.postMessage), email (host, port, from, username, password, html,
//     insecure_skip_verify: SMTP with STARTTLS or implicit TLS on 465).
//     "$key" in a value is the secret's key. Other types come from
//     LoadOptions.ServiceTypes: the Service interface is the seam for a
//     host's own channels.
//   - defaultTriggers, defaultTriggers.<service>, subscriptions (with label
//     selectors) and context.
//
// Everything is checked at load: an expression that does not compile, a
// template that does not parse, a send naming no template, an unknown
// service type or field, a "$key" the secret lacks, an unknown key: a
// *ConfigError (or *MissingSecretError) names the entry, and no secret
// value appears in any error, log line or metric. As in Argo CD, a bad
// trigger does not refuse the ConfigMap: Load returns the rest with a
// *SkippedError naming it; anything else bad refuses it whole.
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
// due. Observe and
// Notify never block: the controller's queue drops (and counts) rather
// than slow a reconcile. Deliveries run in the background, with retries
// and exponential backoff; one that fails for good is counted and
// forgotten, so a later change tries again. Metrics:
// gitops_notifications_sent_total and gitops_notifications_failed_total by
// trigger and service, gitops_notifications_trigger_evaluations_total,
// gitops_notifications_dropped_total.
//
// # Catalog
//
// Catalog is Argo CD's catalog of triggers (on-created, on-deleted,
// on-deployed, on-health-degraded, on-sync-failed, on-sync-running,
// on-sync-status-unknown, on-sync-succeeded) and their templates, written
// from Argo CD's documented semantics. Argo CD's own catalog files (v2.x
// and 3.x, in testdata/argocd) load unchanged, every trigger and template.
//
// # What the engine's notifications give
//
// Through Notify, status.operationState follows the engine's sync
// notifications and status.sync/health the engine's last status
// (ControllerOptions.Status, Engine.AppStatus). The engine's Deleted
// notification (a cascading Engine.Delete that is done) sets
// metadata.deletionTimestamp, so on-deleted fires through Notify too; hosts
// that Observe an Application being deleted (a controller watching the
// custom resource) get it from the object itself.
package notify
