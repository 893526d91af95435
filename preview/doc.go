// Package preview says what a Git change does to every app before it
// merges: the objects each app would add, remove or change, the apps an
// ApplicationSet or an app of apps would add or remove, and whether the
// project rules and policies accept the result. `gitopsctl preview` runs
// it in a CI job and posts the Markdown as a pull-request comment.
//
// Run opens the repository at the base and head revisions and lists the
// files that differ between the two trees (source.ChangedPaths, which
// skips equal subtrees by hash). It reads the app files (Options.Apps) at
// each side, from the side's own tree when they live in the repository,
// and generates the ApplicationSets offline (git generators read the
// side's tree). Then it renders every app at base through an offline
// engine (gitops.Engine.Render, with one offline destination: nothing
// connects to a cluster), and records, per app, every path of the
// repository the render read: each file opened, stat or link read, each
// directory listed, and each subtree whose content hash the engine's
// content-addressed render cache took (the app's own folder among them).
// Chart sources and other repositories are not the change's business.
// Child Applications in a render (app of apps) are apps of the same side,
// rendered in turn.
//
// At head an app is rendered again only when its spec changed, it is new,
// its base render failed, or a changed path touches what its base render
// read: the path itself, a subtree it hashed, or an entry appearing in or
// vanishing from a directory it listed. Every other app keeps its base
// render, so a change to a shared Kustomize base renders exactly the
// overlays built on it and a change to one values file one app;
// Report.Renders counts the renders that ran on each side.
//
// Sources of the previewed repository that track the base (targetRevision
// empty, HEAD, the base or Options.Branch as written, or a revision
// resolving to the base commit) are rendered at each side's commit;
// others at their own revision. Renders run under a permissive project;
// the app's project rules (AppProject given in Options.Projects or in the
// app files) and Options.Policies (gitops.CELPolicy among them) then run
// on every object of the head render of each changed or added app, and a
// refusal fails the app naming the rule. An app whose head render fails
// is reported with the error. Either makes Report.ExitCode 2; a change 1;
// nothing 0.
//
// Object diffs are unified YAML diffs (diff.UnifiedYAML) with the values
// of Secrets replaced by numbered placeholders: equal values get equal
// placeholders, so a reader sees which keys changed and nothing else.
//
// With Options.Live, each changed or added app's head render is also
// refreshed against the cluster by a connected engine, so its diff, ignore
// rules and normalisation decide what a sync would create, update or
// prune. Only an enabled automated sync with prune: true prunes, as in
// Argo CD: other apps' objects no longer in Git are reported as kept
// (ObjectChange.Kept), orphans that require pruning.
//
// Report.Markdown writes a summary table and a collapsed <details>
// section per app (the live comparison's diffs included), bounded in size with a note saying what was cut;
// Report.WriteJSON writes everything.
package preview
