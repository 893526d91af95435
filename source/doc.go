// Package source is where desired state comes from: a Source turns a
// revision the user wrote ("main", "v1.4.2", "~1.4", a commit SHA) into one
// exact Revision, and turns that Revision into a Snapshot, a read-only file
// tree the renderers read without any lock.
//
// The package holds the seams and the logic every source shares:
//
//   - Repository names a repository (URL, the Chart of a chart repository,
//     and Credentials: basic, bearer, SSH key and known hosts, CA bundle
//     and TLS client certificate, and the repository's settings: EnableOCI,
//     InsecureOCIForceHTTP, InsecureSkipTLSVerify, ForceBasicAuth,
//     EnableLFS, Proxy and NoProxy; Err refuses every fetch with the
//     reason a host's credentials cannot be used). Credentials never
//     print, marshal or log their secrets: String, GoString, MarshalJSON and
//     MarshalText all redact, and Repository.String strips any user
//     information written into the URL.
//   - Revision is the resolved identity of a tree: a commit (or a content
//     hash for a local folder) and the ref it came from.
//   - Snapshot is an fs.FS at one revision that also answers TreeHash(path),
//     the content address of a subtree the render cache keys on, and exposes
//     symbolic links as such (it implements fs.ReadLinkFS). A link whose
//     target leaves the tree fails with a *PathError wrapping
//     ErrOutsideRepository.
//   - ChangedPaths compares two snapshots by tree hash and lists the paths
//     that differ, descending only into subtrees whose hashes differ, so a
//     monorepo commit that touches one app costs a walk of that app.
//   - MetadataSource is a Source that tells a commit's RevisionMetadata
//     (author, date, message); source/git implements it.
//   - URLPolicy is an optional allow list of schemes and hosts that also
//     refuses link-local and cloud metadata addresses, checked at connect
//     time (server-side request forgery through a repository URL).
//   - Poller watches many (repository, ref) pairs, deduplicates them, polls
//     each at an interval with jitter, backs off per host on errors and
//     reports revision changes.
//   - WithMounts exposes other snapshots inside one by name ("$values/..."),
//     as multi-source applications need for their ref sources.
//
// The Git implementation lives in source/git, a local folder source in
// source/dir, Helm charts from chart repositories and OCI registries in
// source/helmrepo, Argo CD's repository Secrets in source/repocreds, and a
// webhook receiver that turns push notifications into refresh hints in
// source/webhook.
package source
