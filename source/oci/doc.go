// Package oci is the source of OCI artifacts as application sources
// (Argo CD's docs/user-guide/oci.md): an Argo CD source whose repoURL is
// "oci://registry/org/image" and which names no chart, its path a folder
// inside the artifact, rendered as any Git folder is (plain manifests,
// Kustomize, Helm, Jsonnet).
//
// It implements source.Source. Resolve turns targetRevision into the
// artifact's manifest digest, which is the Revision's Commit (the revision
// an app reports and syncs): a digest ("sha256:...") stays as it is, a
// pin; a tag is resolved to the digest it points at now; a semver
// constraint ("~1.2", ">=1.0 <2", "1.x") that names no tag selects the
// highest tag it admits, as Helm chooses, and is resolved to its digest.
// Tags are read again on every resolve, so a new tag under a constraint
// is picked up by the next refresh.
//
// Snapshot reads the manifest at the digest: at most Options.MaxLayers
// layers, exactly one content layer (a layer whose media type ends in
// tar+gzip, tar.gzip or tar; for a Helm chart artifact, its chart
// content layer, whose top directory is left out), its media type one of
// Options.MediaTypes (Argo CD's reposerver.oci.layer.media.types); other
// layers (provenance, attestations) are skipped as Argo CD skips them. The
// layer is extracted in memory within Options.Limits (total bytes, bytes
// per file, file count; Argo CD's --oci-manifest-max-extracted-size is
// MaxTotalBytes) and Options.MaxLayerBytes as downloaded; an entry that is
// absolute or climbs out, a link or a special file fails the snapshot with
// an *ArtifactError naming the artifact and its digest and wrapping
// ErrUnsafeArtifact or ErrArtifactTooLarge. Extracted artifacts are
// cached by digest (per repository and credentials identity), shared by
// every app, never downloaded again while cached.
//
// Credentials come from source.Credentials (Argo CD's type: oci
// repository Secrets, matched by source/repocreds): a user and password,
// or a bearer token; CA data and client certificates for TLS. Registries
// are reached over HTTPS; over plain HTTP only with Options.PlainHTTP or
// the repository's InsecureOCIForceHTTP (insecureOCIForceHttp), otherwise
// a registry that speaks plain HTTP fails with ErrPlainHTTPRegistry. Every
// request has Options.Timeout and obeys Options.Policy; credentials never
// appear in errors, logs or cache keys.
//
// Package engine builds no OCI source by itself; the root package plugs
// NewSource in (engine.Options.NewOCISource).
package oci
