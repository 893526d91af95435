// Package imageupdate is the image updater: between CI, which pushes
// my-org/my-app:1.4.2 to a registry, and the engine, which applies what Git
// says, it writes the new tag where the engine reads it. It is configured
// the way Argo CD users configure Argo CD Image Updater: with the
// argocd-image-updater.argoproj.io/ annotations of an Application.
//
// ParseAnnotations reads image-list ([alias=]image[:constraint], comma
// separated) and the per-image options (<alias>.update-strategy,
// allow-tags, ignore-tags, platforms, helm.image-name, helm.image-tag,
// helm.image-spec, kustomize.image-name, force-update, pull-secret), and
// the write-back settings (write-back-method argocd, git or
// git:secret:ns/name; git-branch, also base:target with a template;
// write-back-target kustomization[:path] or helmvalues[:path]). Anything
// else under the prefix is refused with ErrAnnotation, never ignored.
//
// A Registry lists tags and reads manifests, indexes and config blobs
// with go-containerregistry. Every call runs under a timeout, requests to
// one registry host are rate-limited, and tag lists and tag descriptions
// are cached for an interval (keyed by image and a hash of the
// credentials), with one call in flight per key: however many
// applications use an image, it is scanned once per interval. A listing
// longer than MaxTags stops with ErrTooManyTags. Credentials come from a
// Docker config JSON, a pull Secret, a Secret field, an environment
// variable or an external command, as the pull-secret annotation says.
//
// Image.Choose applies the update strategy to the tags that passed
// allow-tags, ignore-tags and the platform filter: semver (highest version
// within the constraint), newest-build (newest config creation date),
// alphabetical, or digest (the current digest of one mutable tag).
//
// Updater.Update checks one App (plain values: name, annotations, source,
// the images it runs, repository credentials) and writes back:
//   - argocd: the Result carries an Override (kustomize images or Helm
//     parameters) for the host to hold for the app; the engine's glue
//     (package imageupdate/controller, ApplyOverride) applies it to the app
//     an engine runs and keeps it in the engine's state store, so it
//     survives a restart.
//   - git: the base branch's tip is fetched (depth 1) and checked out in
//     memory by package source/git (Source.Commit), the edit is planned in
//     full before anything is written (Argo's .argocd-source-<app>.yaml,
//     the kustomization's images:, or a Helm values file), committed with
//     the configured author and message template, and pushed with the
//     repository's credentials (git, git:repocreds) or a Secret's
//     (git:secret:ns/name: username and password, or sshPrivateKey), over
//     HTTP(S) (basic or bearer) or SSH (host keys checked against the
//     repository's known_hosts), through the source's URL policy.
//     A push that loses a race with another committer starts over on the
//     new head, so both commits survive.
//
// Every failure is an *Error naming the application and the image or file,
// wrapping one class (ErrAnnotation, ErrConstraint, ErrRegistry,
// ErrTimeout, ErrTooManyTags, ErrCredentials, ErrWriteBackTarget,
// ErrGit); on failure nothing is committed and no override is returned.
// Options.DryRun computes the changes, file edits and overrides and stops
// before committing (Result.DryRun tells hosts not to apply the override).
// Run loops Update over a set of apps every interval, on its own; inside
// an engine, package imageupdate/controller (its Run) does the same over the
// apps the engine runs; the operator (examples/operator) runs its own loop
// over the Application custom resources and writes the argocd override into
// them (controller.WithOverride).
package imageupdate
