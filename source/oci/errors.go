package oci

import (
	"errors"
	"fmt"
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrArtifactTooLarge: an artifact's manifest or content layer, or the
	// files it extracts to, is past a size or file-count limit.
	ErrArtifactTooLarge = errors.New("OCI artifact past limits")
	// ErrUnsafeArtifact: the content layer holds an entry whose path is
	// absolute or leaves the artifact, a link, or a special file.
	ErrUnsafeArtifact = errors.New("unsafe OCI artifact")
	// ErrNotAnArtifact: the manifest is not one this source reads (an
	// index, too many layers, not exactly one content layer, or a layer
	// media type outside Options.MediaTypes).
	ErrNotAnArtifact = errors.New("not an OCI artifact with one content layer")
	// ErrPlainHTTPRegistry: the registry can only be reached over plain
	// HTTP, and neither Options.PlainHTTP nor the repository's
	// credentials (insecureOCIForceHttp) allow it.
	ErrPlainHTTPRegistry = errors.New("the OCI registry speaks plain HTTP, not HTTPS, and the credentials this repository was read with " +
		"do not set insecureOCIForceHttp")
)

// ArtifactError is the error of an artifact that cannot be read safely.
// It names the artifact (registry/repository, no credentials), its digest
// and the offending entry.
type ArtifactError struct {
	// Artifact is the repository of the artifact ("registry/org/image").
	Artifact string
	// Digest is the manifest digest.
	Digest string
	// Entry is the layer entry at fault, if any.
	Entry string
	// Err is the cause, wrapping ErrArtifactTooLarge, ErrUnsafeArtifact or
	// ErrNotAnArtifact.
	Err error
}

// Error implements error.
func (e *ArtifactError) Error() string {
	if e.Entry != "" {
		return fmt.Sprintf("OCI artifact %s@%s: entry %q: %v", e.Artifact, e.Digest, e.Entry, e.Err)
	}
	return fmt.Sprintf("OCI artifact %s@%s: %v", e.Artifact, e.Digest, e.Err)
}

// Unwrap returns the cause.
func (e *ArtifactError) Unwrap() error { return e.Err }
