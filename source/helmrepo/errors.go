package helmrepo

import (
	"errors"
	"fmt"
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrUnsafeArchive: a chart archive holds an entry whose path is
	// absolute or leaves the chart, a link, or a special file.
	ErrUnsafeArchive = errors.New("unsafe chart archive")
	// ErrArchiveTooLarge: a chart archive (or index) is past a size or
	// file-count limit.
	ErrArchiveTooLarge = errors.New("chart archive past limits")
	// ErrChartNotFound: the repository has no such chart, or no version
	// that satisfies the constraint.
	ErrChartNotFound = errors.New("chart not found")
	// ErrDigestMismatch: a downloaded archive does not have the digest the
	// repository index announced.
	ErrDigestMismatch = errors.New("chart digest mismatch")
	// ErrPlainHTTPRegistry: an OCI registry answered HTTPS with plain
	// HTTP, and the credentials of the repository do not say
	// insecureOCIForceHttp (source.Credentials.InsecureOCIForceHTTP).
	ErrPlainHTTPRegistry = errors.New("the OCI registry speaks plain HTTP, not HTTPS, and the credentials this repository was read with " +
		"do not set insecureOCIForceHttp: no repository Secret (or repo-creds template) that applies to this URL and the app's project sets it " +
		"(a Secret's url matches with or without oci://)")
)

// ArchiveError is the error of a chart archive that cannot be unpacked
// safely. It names the chart, its version and the offending entry.
type ArchiveError struct {
	// Chart and Version name the chart.
	Chart, Version string
	// Entry is the archive entry at fault, if any.
	Entry string
	// Err is the cause, wrapping ErrUnsafeArchive or ErrArchiveTooLarge.
	Err error
}

// Error implements error.
func (e *ArchiveError) Error() string {
	if e.Entry != "" {
		return fmt.Sprintf("chart %s %s: entry %q: %v", e.Chart, e.Version, e.Entry, e.Err)
	}
	return fmt.Sprintf("chart %s %s: %v", e.Chart, e.Version, e.Err)
}

// Unwrap returns the cause.
func (e *ArchiveError) Unwrap() error { return e.Err }
