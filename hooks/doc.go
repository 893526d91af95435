// Package hooks decides which objects of a desired state are hooks, in which
// sync phases they run, when they are deleted, which wave they belong to, and
// what a hook created from a generateName is called. It reads Argo CD's
// annotations and, where those are absent, Helm's, with Argo CD's mapping, so
// charts and repositories written for either run unchanged.
//
// The rules, in the order Of applies them:
//
//   - argocd.argoproj.io/hook (CSV of PreSync, Sync, PostSync, SyncFail,
//     Skip, and the deletion phases PreDelete and PostDelete, which a sync
//     never runs) wins over helm.sh/hook whenever it is present.
//   - "Skip" alone means the object is neither applied nor run. Skip with
//     other phases is an error, as is an unknown phase name: a hook that
//     silently never runs is worse than a refused sync.
//   - helm.sh/hook maps pre-install and pre-upgrade to PreSync, post-install
//     and post-upgrade to PostSync. crd-install is not a hook (the object is
//     an ordinary resource). Every other Helm event (tests, deletes,
//     rollbacks) makes the object a hook of no phase we run: it is neither
//     applied nor run, as with Argo CD.
//   - Delete policies come from argocd.argoproj.io/hook-delete-policy
//     (HookSucceeded, HookFailed, BeforeHookCreation) and
//     helm.sh/hook-delete-policy (hook-succeeded, hook-failed,
//     before-hook-creation), united; with neither, BeforeHookCreation.
//   - The wave is argocd.argoproj.io/sync-wave, else helm.sh/hook-weight,
//     else 0; a value that is not an integer is an error.
package hooks
