// Package helmrepo is the source of Helm charts: an Argo CD source with
// spec.source.chart, read from an HTTP(S) Helm chart repository (its
// index.yaml and the archives it lists) or from an OCI registry
// ("oci://host/path", or "host/path" with Credentials.EnableOCI, as Argo
// CD's enableOCI repositories). Registries are reached over HTTPS; one
// whose Credentials.InsecureOCIForceHTTP is set (Argo CD's
// insecureOCIForceHttp) is reached over plain HTTP, and a registry that
// answers HTTPS with plain HTTP fails with ErrPlainHTTPRegistry, which
// names that field.
//
// It implements source.Source, so a chart flows through the engine like a
// Git path: Resolve turns targetRevision (an exact version, or a semver
// constraint such as "1.2.x", ">=1.0 <2", "~1.2", "^1" or "*", read as
// Helm reads it: an exact match first, then the highest version the
// constraint admits) into a Revision whose Commit is the chart version;
// Snapshot returns the chart's files as a read-only tree, the chart's own
// directory at its root, so the Helm renderer and the content-addressed
// render cache do the rest.
//
// Caching. A repository index is fetched at most once per repository,
// identity and Options.IndexTTL; concurrent resolves share one request (as
// source/git shares one ls-remote). Indexes and archives are stored on disk
// under Options.CacheDir by their SHA-256 digest, evicted oldest-first past
// Options.MaxCacheBytes; a chart version once fetched is served from the
// cache for the life of the Source (and of the cache directory), never
// fetched again: versions are treated as immutable, as Helm does.
//
// Safety. Every request has Options.Timeout and obeys Options.Policy.
// Responses are read up to Options.MaxArchiveBytes. Archives are unpacked
// in memory within Options.Limits (total bytes, file count, bytes per
// file); an entry whose path is absolute or climbs out of the chart, a
// symbolic or hard link, or any entry that is not a file or a directory
// fails the snapshot with an *ArchiveError naming the chart and version
// and wrapping ErrUnsafeArchive (or ErrArchiveTooLarge). Credentials are
// only ever sent to the repository's own host, and never appear in
// errors, logs or cache keys (the cache keeps the work of different
// identities apart by a digest of the credentials).
package helmrepo
