// Command portal is an internal deploy portal built on the gitops engine: a
// web UI and a small JSON API over one gitops.Engine, with no second source
// of truth. The engine's run loop owns status; the portal reads it
// (Engine.Apps().AppStatus, History, LastOperation, Render, ResourceTree,
// LiveObject: the tree and live objects from the engine's own cluster
// caches, a descendant's whole object from the API server), and acts
// through the engine (Refresh, Sync, Rollback, Terminate, RunAction,
// Delete, Upsert, Remove).
//
//	go run ./examples/portal --apps DIR --token-file tokens.txt --policy policy.yaml
//	go run ./examples/portal --apps DIR --token-file tokens.txt --rbac-cm argocd-rbac-cm.yaml \
//		--projects projects.yaml --tls-cert tls.crt --tls-key tls.key
//
// Pages are html/template, rendered on the server, with small vanilla
// scripts: web/app.js for the resource panel, the sync dialog (reset to
// its defaults at each opening) and what server-sent events push: the live
// progress of a sync, the status badges, and the tree, history and last
// operation after each refresh or sync (the engine's OnStatus, after every
// refresh its run loop records, which a change in the cluster to one of the
// app's objects or their descendants queues, and after each Refresh and
// Sync; at most one push per app per 100 ms, nothing on a timer); web/list.js for the list's bulk
// sync, refresh and delete and the create dialog; web/listlive.js for its pushed rows and tiles; web/manage.js for the app page's
// delete dialogs. Nothing is built with Node; the assets are embedded.
// app.js passes each pushed page on as a
// "portal:page" DOM event to three more scripts: web/graph.js draws the
// tree as an SVG graph laid out left to right (arrow keys move between
// nodes, Enter opens one) and the network view from GET
// /api/v1/apps/{name}/network (Ingress -> Service from the Ingresses'
// backends, Service -> Pod from the Services' selectors, the app's Pods
// only); web/diff.js shows GET /api/v1/apps/{name}/diff, every changed
// object's diff from the engine's status (Secret values masked by the
// engine), unified or side by side; web/details.js shows GET
// /api/v1/apps/{name}/details (sources, Helm and Kustomize settings, sync
// policy) and POSTs edits to it.
//
// The sync dialog also offers Argo CD's sync options for the operation
// (Replace, ServerSideApply, Force, PruneLast, ApplyOutOfSyncOnly: POST
// .../sync {syncOptions: ["Replace=true", ...]}, merged over the app's) and
// a retry ({retry: {limit, duration, factor, maxDuration}}, in place of the
// app's syncPolicy.retry); both need "applications, sync", are audited
// with the sync, and a malformed one is 400 naming it.
//
// Commits: the header and each history row show the commit's subject and
// author, from Engine.RevisionMetadata, cached by repository and commit
// and read only when a page is rendered or a refresh finished.
//
// Details: POST /api/v1/apps/{name}/details needs "applications, update"
// (403) and changes automated sync, prune, self-heal, sync options, and
// the first source's Helm parameters and values (a Helm source: a chart,
// a helm block, or a folder whose files are a chart) or Kustomize images
// (a kustomize block, or a folder whose files are an overlay; otherwise
// 400 naming the field; the block is added when missing). The edited app
// is validated, written to the app's file of the --apps folder, handed to
// Engine.Apps().Upsert and audited ("details"); with --namespace it is written to
// the Application object instead. The folder's files are written
// atomically (a temporary file, then a rename) and only where the edit
// changed something: comments, other documents and other fields stay. An
// app created in the portal gets a file of its own (NAME.yaml); one
// deleted leaves its file (the file goes when it held nothing else). An
// edit, create or delete whose file cannot be written is not made. GET /api/v1/apps/{name}/parameters
// ("applications, get") lists each source's type as its files say, a
// Helm source's values (values.yaml and the selected value files,
// flattened a.b, list[0]) with the helm.parameters overrides marked, and
// a single-source Kustomize app's rendered images with the override that
// set each.
//
// The app page's Parameters (web/params.js) shows that table: a Helm
// source's values with its overrides marked, a Kustomize source's images
// with the override of each; for a role with "applications, update" the
// first source's overrides are inputs, saved through POST .../details
// (helmParameters, kustomizeImages), audited as any details edit, and
// lasting as that edit does.
//
// Namespace mode: --namespace NS (instead of --apps; with neither
// --projects, --projects-namespace nor --cluster-secrets-namespace) serves
// the Applications of an operator's namespace (examples/operator): its
// Applications, AppProjects, cluster and repository Secrets are watched;
// status, history and the last operation are what the operator writes;
// the portal's engine runs no app and only reads (diffs, trees, live
// objects, parameters). Edits are written to the Application objects as
// Argo CD's API server writes them: details with the object's
// resourceVersion (a concurrent write is read again), create, delete
// (the resources finalizer of the cascade), sync and rollback (the
// operation field, refused while one is set; the portal waits for the
// operator's outcome), terminate (status.operationState.phase
// Terminating), refresh (the refresh annotation). They survive a restart
// of the portal.
//
// ApplicationSets (appsets.go): GET /applicationsets, linked from the
// list, and GET /api/v1/applicationsets show the namespace's
// ApplicationSets the caller may get ("applicationsets, get" on
// "<project of the template>/<name>", as Argo CD authorises them), read
// only: each set's generators, rollout strategy, the apps it generated
// (its owned Applications the caller may get, linked), its conditions and
// its progressive sync's steps (status.applicationStatus, by step). Over
// an --apps folder (appsetfolder.go) a manifest file whose documents are
// all ApplicationSets is a set file (one that mixes them with other
// documents fails the start, naming it): its sets run in the portal's
// engine (appset/controller, as Argo CD's ApplicationSet controller runs
// them) and the Applications they generate are served beside the
// folder's own (looked at every 200 ms, pushed to the list as a create or
// delete is); the page shows each set's generated apps, its condition and
// the rollout step in progress. A set with a generator that needs Argo
// CD's namespace (clusters, clusterDecisionResource, plugin, scmProvider,
// pullRequest) is shown with the reason and not run. An edit of a
// generated app is refused (no file of the folder defines it).
//
// Settings (settings*.go): GET /settings/repositories, /settings/clusters
// and /settings/projects (linked from the list) and GET
// /api/v1/repositories (?connection=true: each Git repository's ls-remote
// through the engine's source, with its credentials, 5 s at most),
// /api/v1/clusters and /api/v1/projects show what the caller may get
// ("repositories, get" on "<project>/<url>", or the URL without a project
// and for a credential template; "clusters, get" on "<project>/<server>";
// "projects, get" on the name): the repository and repo-creds Secrets (a
// secret field only as set), the cluster Secrets and the implicit
// in-cluster (how each authenticates, never a credential) and the
// AppProjects. In namespace mode POST /api/v1/repositories and
// .../repositories/{secret}/update|delete, .../clusters/{secret}/update|delete
// and /api/v1/projects, .../projects/{name}/update|delete write the Secrets
// and AppProjects, decided as Argo CD's API server decides them (an update
// checks where the object is and where it goes; a project's added source or
// destination also needs "repositories, update" or "clusters, update" on
// it; an update leaving one of its apps outside its sources or destinations
// is 400, Argo CD's "as a result of project update N applications ...
// became invalid"; default and a project apps use are not deleted) and
// audited; a refusal is 403 naming the line. A new Git repository
// of no project is connected to first (its credentials, else a template's),
// as Argo CD does: 400 when it cannot be. The page shows the
// forms only to a role that may use them, else the refusal. Over an --apps
// folder the pages are read only and a write is 409.
//
// The list counts its apps by sync and health status in tiles (each links
// to the list filtered by that status; the counts use every other
// filter). POST /api/v1/sync {apps, prune} syncs each named app the caller
// may sync and the engine would not refuse at once (Engine.CheckSync: the
// project's rules and sync windows) and answers {started, refused: [{app,
// error}]}, every refusal audited; one app's sync the engine refuses so is
// 403, as in Argo CD. POST /api/v1/refresh {apps, hard} refreshes each
// named app the caller may get (Argo CD's refresh is a get) and POST
// /api/v1/delete {apps, cascade, confirm: the number of apps,
// confirmResources} deletes each one the caller may delete ("applications,
// delete"), each as one app's deletion (confirmResources approves the
// deletion of the objects marked Delete=confirm, as Argo CD's Confirm
// Deletion; without it an app holding one stays and its audited error
// names them); both answer {started, refused} as a bulk sync does, every
// refusal audited (a deletion also when it starts and ends); the list's
// delete dialog names the apps and offers the cascade. GET /api/v1/stream
// pushes the list an "app" event (the app's row) when the engine's Notify
// reports a sync or health change, a "created" event when an app is
// created and a "removed" event when one is deleted, only for apps the
// watching caller may get; at each (web/listlive.js; a burst folded into
// one more read) the page reads GET /api/v1/apps again with its own
// filters and page and redraws its rows, tiles and count in place, so an
// app entering or leaving the filtered list does so without a reload. POST /api/v1/apps creates an app from a form
// (name, project, repoURL, path, targetRevision, cluster, namespace,
// automated, prune, selfHeal): Validate, then "applications, create" on
// <project>/<name>, then the project's rules for the app
// (Engine.CheckApplication: a destination cluster given by name matches
// the project's destinations by that cluster's server too), then
// Engine.Apps().Upsert. POST /api/v1/apps/{name}/delete
// {cascade: foreground|background|non-cascading, confirm: the app's name,
// confirmResources} deletes an app (Engine.Delete until done, unless
// non-cascading) and removes it from the engine and the list; POST
// /api/v1/apps/{name}/resource/delete {key, mode: delete|orphan|force,
// confirm: the object's name} deletes one object of the app's tree through
// the API server of the portal's own cluster (foreground; orphan;
// background with no grace period), the tree's UID as a precondition.
// Deleting the app needs "applications, delete"; deleting a resource
// needs what Argo CD 3 asks, "applications,
// delete/<group>/<kind>/<namespace>/<name>" (the app's own delete reaches
// its resources only with argocd-cm's
// server.rbac.disableApplicationFineGrainedRBACInheritance "false"); the
// page enables Delete resource for each resource the caller may delete
// (GET /api/v1/apps/{name}/permissions?key=K answers deleteResource).
// Created and deleted apps live in the running portal only: the --apps
// folder is not rewritten.
//
// The resource list of the app page filters by name, kind, sync status
// and health (web/treefilter.js; a node shows when it or a descendant
// matches), again after each pushed page. The filters are the URL's query
// parameters name, kind, sync and health, and the graph filters its nodes
// by them too (web/graphshape.js); view=graph|network opens that view.
// The graph (web/graphzoom.js) zooms with its toolbar, Ctrl+wheel and the
// keys +, - and 0 (fit), pans by dragging, and keeps both across pushed
// pages; more than two children of one kind under one parent are one
// group node ("3 Pods", Argo CD's group nodes) until a click or Enter
// expands it; "Group nodes of a kind" (the URL's group=off) turns them off.
//
// App of apps: an Argo CD Application among an app's managed objects
// links, in the tree, to the page of the app of that name when this
// portal serves one (that page asks for "applications, get" as any does).
//
// Destinations are shown by their cluster's name (destination.name, else
// the name of the cluster with that server); --cluster-secrets-namespace
// adds Argo CD cluster Secrets of a namespace as destinations. When the
// project's sync windows block a manual sync now (project.SyncAllowed),
// the app page disables Sync and says which window and when a sync is next
// allowed again (the first opening or closing of a matching window within
// 14 days that allows it); the page does not update that note as time passes.
// The app page also lists, as Argo CD's app details do, the project's sync
// windows that apply to the app (project.WindowMatches): kind, schedule
// and time zone, duration, manualSync, whether each is active now and what
// it does to syncs now (windowEffect), and whether a manual and an
// automated sync may start now (project.SyncAllowed), read when the page
// is rendered; it is part of GET /api/v1/apps/{name} ("applications, get",
// as Argo CD's GetApplicationSyncWindows) as "windows".
//
// Security: every request is authenticated (a bearer token from the token
// file, or a session cookie made by logging in with such a token or through
// an OIDC issuer; with argocd-rbac-cm, also an Argo CD project token, see
// below). Every API call is authorised by one function (appFor)
// in Argo CD's terms, (resource, action, "<project>/<app>"): get, resource,
// events, stream, the action list and refresh need "applications, get"
// (without it the app is not found, 404); sync, rollback and terminate need
// "applications, sync" (403); a resource action needs
// "applications, action/<group>/<kind>/<name>"; the list holds the apps
// the caller may get. The rules are the role file's (--policy: readonly
// is get on applications and logs, admin every action on applications,
// secrets unmasks Secret values), or with --rbac-cm an argocd-rbac-cm
// manifest evaluated by package rbac with the AppProjects' roles, as Argo
// CD decides: the user and each of its groups checked on its own, allowed
// if any is (Secret values always masked, as in Argo CD; OIDC groups read
// from its scopes), or with --rbac-namespace NS the ConfigMap
// argocd-rbac-cm of that namespace, watched: each change replaces the
// policy for the next request (one that does not load is logged and the
// last good one kept; OIDC scopes are read at start only). A refusal
// (403, and the audit log) names each subject checked and the policy line
// that refused it (its source and line number: builtin-policy.csv,
// policy.csv, policy.<name>.csv, an AppProject role), or says no line
// matched.
//
// With --rbac-namespace NS the portal also reads, live, argocd-cm's
// server.rbac.disableApplicationFineGrainedRBACInheritance (absent: Argo
// CD 3's default, true) and argocd-secret's server.secretkey of NS.
// Project tokens: a bearer token that is a JWT Argo CD's API server issued
// for a project role ("argocd proj role create-token": issuer argocd,
// subject proj:<project>:<role>, HMAC-signed with server.secretkey) is
// honoured while its entry (id, or iat) is listed in that role's
// jwtTokens, and acts as the role, only within its project. It is checked
// at each request: with --projects-namespace NS (the AppProjects of NS,
// read live and given to the engine too, instead of --projects) removing
// the entry revokes it from the next request on, without a restart; with
// --projects FILE the projects are read at start. A project token is a
// bearer credential only (it does not log in a browser), is never logged,
// and its id appears in the audit log (tokenId).
// GET /api/v1/apps/{name}/permissions answers get, sync, logs ("logs,
// get"), secrets, update and delete; the page shows Sync, Terminate and Roll back only with
// sync, the Logs tab only with logs, and the action list marks each action
// permitted or not.
//
// Logs: GET /api/v1/apps/{name}/pods?key=K lists the Pods of a Pod or
// workload node (from the engine's tree) with their containers, and GET
// /api/v1/apps/{name}/logs?key=POD&container=C streams that container's
// logs through the API server (GetLogs(...).Stream) as server-sent events,
// a "line" event per line and one "end" event saying why it stopped. Both
// need "logs, get" (403). follow and previous (the previous container's
// logs) are true or false; tailLines defaults to 1000 (at most 10000),
// limitBytes to 4 MiB (at most that), sinceSeconds is optional, and
// --logs-follow-max (default 30 minutes) bounds each stream. A Pod outside
// the app is 404; a bad parameter 400 naming it. timestamps=true leads each
// line with its time; download=true answers the whole log (every line
// unless tailLines is given, at most 64 MiB) as a text file named
// <pod>-<container>.log, never followed. The Logs tab has a search that
// marks matching text in every line, new ones too ("/" focuses it, Escape
// clears it), "Matching lines only", Timestamps, and Download.
//
// Terminal: GET /api/v1/apps/{name}/exec?key=POD&container=C (container
// defaults to the Pod's first) is a WebSocket, same origin only, bridged
// to the Pod's exec subresource with a TTY (client-go remotecommand),
// running the first shell of argocd-cm's exec.shells (default bash, sh,
// powershell, cmd) that starts. As in Argo CD it is off until argocd-cm's
// exec.enabled is "true" (read live from --rbac-namespace; 403 naming
// exec.enabled) and needs "exec, create" on the app (403 naming it). The
// page sends {"operation":"stdin","data":...} and {"operation":"resize",
// "rows":R,"cols":C}; the portal sends the output as binary messages and
// "shell" and "end" as text. Each opening, refusal and end is audited
// (action "exec"); a session lasts at most 30 minutes. The Pod's Terminal
// tab is a plain <pre>: keys typed there go to the shell (Shift+Tab
// leaves), control sequences are taken out of the output.
//
// --tls-cert and --tls-key serve HTTPS, reading the pair again when either
// file's modification time or size changes (a broken pair keeps the last
// good one). --trusted-proxies lists the CIDRs whose X-Forwarded-Proto,
// -For and -Host are believed; from other peers those headers are
// dropped. A request over TLS, or from a trusted proxy saying https, gets
// Secure cookies and Strict-Transport-Security: max-age=31536000; plain
// HTTP gets neither.
//
// Every POST carries the session's CSRF token; responses carry a strict
// Content-Security-Policy (no inline script or style); each sync (one or
// bulk), rollback, terminate, resource action, create and delete (of an
// app or a resource) is written to the audit log with
// who asked and what, and so is each attempt refused (by a role, the
// policy, a CSRF check, a running operation, or the engine's project rules
// and sync windows), with the outcome "refused: <why>".
//
// --operator is refused by name: --namespace NS serves Applications kept in
// the cluster.
package main
