// Package hydrator is Argo CD's source hydrator (the rendered-manifests
// pattern) over an engine: an Application with spec.sourceHydrator has its
// dry source rendered by the engine, and the result committed to Git, at
// syncSource.path on syncSource.targetBranch (or hydrateTo's branch), in
// syncSource.repoURL (the dry repository when empty). The app then syncs
// from there: the engine reads an app with a source hydrator from its sync
// source (v1alpha1.SourceHydrator.GetSyncSource).
//
// The commit has Argo CD's layout, so that a tool reading Argo CD's
// hydrated branches reads these:
//   - <path>/manifest.yaml holds the rendered objects, in the order the
//     tools wrote them, each a YAML document indented by 2 and separated by
//     "---";
//   - <path>/hydrator.metadata is JSON (repoURL, drySha, commands) and
//     <path>/README.md Argo CD's README template over it, written only for
//     a path whose manifest.yaml changed;
//   - the root's hydrator.metadata names the dry commit (repoURL, drySha,
//     author, date, subject, body) and .gitattributes marks README.md and
//     hydrator.metadata as generated;
//   - a git note in refs/notes/hydrator.metadata, {"drySha":"..."}, marks
//     the commit (or, when nothing rendered changed, the branch's tip) as
//     the hydration of that dry commit.
//
// The commit message is Argo CD's sourceHydrator.commitMessageTemplate
// (argocd-cm; DefaultCommitMessageTemplate) over {"metadata": the root's
// metadata}, with sprig's functions but env, expandenv and getHostByName;
// the author is argocd-cm's commit.author.name and commit.author.email
// ("Argo CD" <argo-cd@example.com> by default).
//
// Apps with the same dry repository and revision that hydrate to the same
// repository and branch are hydrated together (Groups): the first app's
// render resolves the dry commit, the others render that commit, and one
// commit holds them all. A dry commit that changes nothing rendered makes
// no commit: the note alone is pushed to the branch's tip. A dry commit
// already hydrated (its note on the tip) is not rendered again.
//
// Pushes use the write credentials the host gives (Options.
// WriteCredentials: Argo CD's repository-write and repo-write-creds
// Secrets, source/repocreds' WriteForProject), never the read ones; the
// dry source is read by the engine with its read credentials. Both
// repositories are checked against the app's project (sourceRepos), and a
// hydration to the repository's root is refused, as Argo CD refuses it.
//
// Status: Begin and Finish move status.sourceHydrator through Argo CD's
// phases (Hydrating, then Hydrated or Failed with its message); the host
// writes them to the Application, Hydrating from Options.Hydrating, called
// once a rendered dry commit is to be written and before it is pushed.
// HydrateInClone is the same hydration into a local clone, pushing
// nothing (gitopsctl hydrate, for CI).
package hydrator
