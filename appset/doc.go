// Package appset runs Argo CD ApplicationSets: it loads them strictly
// (Load), turns their generators into parameter sets and renders each set
// into an Application manifest (Runner.Generate), with Argo CD's parameter
// names and semantics:
//
//   - list (elements, elementsYaml), clusters (cluster Secrets labelled
//     argocd.argoproj.io/secret-type: cluster and the local cluster;
//     selector; values), git directories (path, path.basename,
//     path.basenameNormalized, path[n] / path.segments; exclude) and git
//     files (JSON or YAML, "**" globs, flattened keys or nested ones under
//     goTemplate), matrix (two generators; either may use the other's
//     parameters, not both), merge (mergeKeys), scmProvider and
//     pullRequest (through providers by key: appset/scm/all registers
//     Argo CD's forges; StaticSCM and StaticPullRequests serve fixed
//     lists) with Argo CD's filters (repository filters before branches,
//     branch filters after; titleMatch), cloneProtocol, values and
//     continueOnRepoNotFoundError, under an SCMPolicy;
//     clusterDecisionResource (a duck-typed resource a DecisionReader
//     reads); plugin (an HTTP POST of its input to the plugin its
//     ConfigMap names, with the token of argocd-secret or another Secret,
//     read through Objects); selector on any generator;
//   - templates: the fasttemplate default ({{path.basename}}; unknown tags
//     are left as written) or goTemplate (text/template, sprig without
//     env/expandenv/getHostByName, plus normalize, slugify, toYaml,
//     fromYaml, fromYamlArray) with goTemplateOptions; a generator's own
//     template overlays the set's; templatePatch is merged over the result.
//
// Git generators read a source.Snapshot through Repos, so they run offline
// (source/dir) and against a Git server (source/git) alike; config files
// are cached by content, so a new commit re-reads only changed files.
//
// Failures are *Error values naming the set and the generator, wrapping
// ErrMissingKey, ErrInvalidApplication, ErrDuplicateName, ErrTooMany,
// ErrTemplateLoop, ErrNoProvider, ErrRepositoryNotFound, ErrSCMDisabled,
// ErrSCMNotAllowed, a *PluginError or a *ClustersError. A generator that
// fails keeps its last good output (Argo CD's rule: nothing previously
// generated is deleted because a generator failed); a clusters generator
// some of whose Secrets could not be read yields the others and keeps the
// last Applications of the missing ones, and still fails, so a set never
// says it generated everything when a cluster is missing.
//
// KeepIgnoredDifferences applies spec.ignoreApplicationDifferences (JSON
// pointers and jq paths, for every Application or one by name) to an
// update: the named fields keep the existing Application's values, as Argo
// CD's ApplicationSet controller keeps them.
//
// The package does not import the engine: its subpackage controller
// (the ApplicationSet runner) upserts the generated Applications into a
// running Engine and applies the set's sync policy and rollout strategy;
// the operator example (examples/operator/appsets) writes them as
// Application custom resources owned by the set, with the same policies.
// Both share the rollout rules' pieces: StepSelects, MaxUpdate,
// RequeueAfter and GitRepos.
package appset
