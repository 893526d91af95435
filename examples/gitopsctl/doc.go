// Command gitopsctl is the command-line face of the gitops library and the
// example of a host program built on it.
//
//	gitopsctl demo [--keep] [--kubeconfig FILE] [--namespace-prefix P]
//	    a guided tour: start a local cluster (or use FILE's), serve the
//	    bundled demo repository (demo/repo) over a real Git HTTP server,
//	    run the engine with automated sync, prune and selfHeal on three
//	    apps (a PreSync Job hook and sync waves, a Helm chart, a Kustomize
//	    overlay), show health turning Healthy, undo a change made by hand,
//	    roll out a commit, print a summary
//	gitopsctl render --app FILE
//	    print the manifests the engine renders for the Application in FILE
//	gitopsctl diff --app FILE
//	    print the masked unified diff of each out-of-sync object; exit 0 in
//	    sync, 1 out of sync, 2 on error
//	gitopsctl sync --app FILE [--prune] [--dry-run] [--health] [--timeout D]
//	    sync once, printing a row per object as each wave finishes, then the
//	    result and the app's status (after a failure, a row per object with
//	    its message); as argocd app sync it waits for the operation (each
//	    wave but the last waits for health), and for the last wave's health
//	    only with --health; --timeout (a duration, or seconds) gives up and
//	    names what is still waited for; --async is refused (the operation
//	    runs in this process); exit 0 succeeded, 1 failed or timed out, 2
//	    on error
//	gitopsctl status --app FILE [-o json]
//	    sync status, health, revision, reconcile time, a row per resource,
//	    conditions, and
//	    the last operation (phase, message, a row per object, which
//	    self-heal it was), also when another process (an agent's automated
//	    sync) ran it, and for an OutOfSync app with selfHeal after an
//	    automated sync, which self-heal comes next and when (the agent's
//	    backoff: Argo CD's default, 2 s times 3 up to 5 minutes)
//	gitopsctl agent --apps FILE|DIR [--interval D] [--webhook-addr ADDR]
//	    run the engine on every Application found until Ctrl-C, printing
//	    its notifications and a line when an app gets a condition (a
//	    render or sync failure) and when it clears; an automated sync
//	    that heals a drift says which self-heal it is, and one that waits
//	    for the self-heal backoff is announced (SelfHealBackoff) with when
//	    it is due; a file that does not
//	    load is reported on stderr (file, line, field) and the other apps
//	    are managed; with --webhook-addr, serve push webhooks (GitHub,
//	    GitLab, Gitea, Gogs, Bitbucket) at /api/webhook, verified with the
//	    secret of --webhook-secret-file or $GITOPS_WEBHOOK_SECRET; with
//	    --hydrate, run the source hydrator for apps with
//	    spec.sourceHydrator every --hydrator-interval (default 3m), as the
//	    operator does with hydrator.enabled: pushed with --repositories'
//	    repository-write Secrets, argocd-cm's author and templates, a line
//	    per new hydration (Hydrated) or failure (HydrationFailed)
//	gitopsctl cluster up [--kubeconfig-out FILE] [--apiserver-only]
//	    start a real local cluster (etcd, kube-apiserver, controllers, a kwok
//	    node), write its kubeconfig, and keep it running until Ctrl-C
//	gitopsctl cluster build
//	    build the local cluster's programs into the user cache (once)
//	gitopsctl health-test DIR
//	    run Argo CD format Lua health tests found under DIR
//	gitopsctl action list --app FILE RESOURCE
//	gitopsctl action run --app FILE RESOURCE ACTION [--param k=v]...
//	    list or run the resource actions (restart, scale, create-job, ...)
//	    of an object the app manages; RESOURCE is [group/]Kind/name in the
//	    app's destination namespace (--namespace to choose another)
//	gitopsctl action-test DIR
//	    run Argo CD format resource action tests (actions/action_test.yaml)
//	    found under DIR, judged as Argo CD's own test judges them
//	gitopsctl image-update --app FILE [--dry-run] [--docker-config FILE]
//	    check the app's images like Argo CD Image Updater (its
//	    argocd-image-updater.argoproj.io/ annotations) and print each tag
//	    change with a diff of the files the git write-back edits (or the
//	    argocd parameter override); without --dry-run the git write-back
//	    commits and pushes with $GITOPS_GIT_USERNAME/$GITOPS_GIT_PASSWORD
//	gitopsctl preview --repo URL|DIR --base REF --head REF --apps FILE|DIR
//	    [--branch B] [--kubeconfig FILE] [--format markdown|json]
//	    [--projects FILE] [--policy FILE] [--max-bytes N]
//	    what moving the repository from base to head does to every app
//	    (package preview): objects added, removed and changed per app,
//	    apps added or removed, policy refusals, and with --kubeconfig what
//	    a sync would do; exit 0 no change, 1 changes, 2 error or refusal
//	gitopsctl hydrate --app FILE --clone DIR [--author "Name <email>"]
//	    [--commit-message-template T] [--repositories FILE]
//	    hydrate the app's spec.sourceHydrator once, as Argo CD's source
//	    hydrator does (package hydrator), into the local clone DIR, on the
//	    branch it has checked out (the app's hydrated branch): one commit
//	    with manifest.yaml, hydrator.metadata and README.md at the sync
//	    path and the hydrator.metadata note; nothing when the dry commit
//	    changes nothing rendered; nothing is pushed (rendered offline,
//	    --kube-version and --api-versions as for render)
//
// Commands that talk to a cluster take --kubeconfig (default $KUBECONFIG,
// else ~/.kube/config) and --context, and the engine settings a host
// would set in Go: --scripts-dir DIR (health and action scripts in Argo
// CD's resource_customizations layout, <group>/<Kind>/health.lua and
// <group>/<Kind>/actions/..., that replace the built-in ones of their
// kinds), --argocd-cm FILE|cluster:NS (Argo CD's settings ConfigMap),
// --repositories FILE|cluster:NS (Argo CD's repository and repo-creds
// Secrets and argocd-tls-certs-cm: the credentials, CAs and options of Git
// repositories, chart repositories and OCI registries; a field read
// without effect is named on stderr, and a file that does not load fails
// the command),
// --state-namespace NS (each app's history and last operation in
// ConfigMaps gitops-state-<app>, default "default"; the agent writes
// them, every other command only reads them and keeps its own in memory
// unless the flag is given; empty for memory only), --ref-cache-ttl D (how long a repository's branches and tags are
// reused; never longer than the agent's --interval),
// --recreate-on-immutable (re-create an object whose update changes an
// immutable field), --health-lua GROUP/KIND=FILE (a Lua health script
// for that kind, repeatable) and --sops PROGRAM / --sops-age-key-file FILE
// (SOPS-encrypted files are decrypted with those age keys by gitops-sops,
// the program of the github.com/kubegitops/gitops/sops module, through
// render/execdecrypt: gitopsctl itself does not link SOPS's cloud SDKs; a
// KSOPS generator is refused, naming the file, with what to write
// instead). The cluster is given to the engine
// both as "in-cluster" at https://kubernetes.default.svc and by its own
// URL, so Applications written for Argo CD work unchanged. Sources may be
// Git URLs or local folders (absolute paths or file:// URLs).
//
// render renders through the engine (a refresh whose renderers record
// their output), so what it prints is exactly what diff and sync use.
package main
