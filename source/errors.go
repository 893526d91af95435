package source

import (
	"errors"
	"fmt"
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrRevisionNotFound: the revision names no ref, tag or commit of the
	// repository, or no tag satisfies the semver constraint.
	ErrRevisionNotFound = errors.New("revision not found")
	// ErrAmbiguousRevision: a short SHA matches more than one commit.
	ErrAmbiguousRevision = errors.New("ambiguous revision")
	// ErrOutsideRepository: a path, or the target of a symbolic link,
	// resolves outside the repository tree.
	ErrOutsideRepository = errors.New("resolves outside the repository")
	// ErrURLNotAllowed: the repository URL, or an address it resolves to,
	// is refused by the URLPolicy.
	ErrURLNotAllowed = errors.New("url not allowed by policy")
	// ErrUnavailable: the server could not be reached (connection refused
	// or reset, no route, unknown host).
	ErrUnavailable = errors.New("server unavailable")
	// ErrTimeout: a network operation did not finish within its timeout.
	ErrTimeout = errors.New("timed out")
	// ErrAuthentication: the server refused the credentials (or asked for
	// some and none were given).
	ErrAuthentication = errors.New("authentication failed")
	// ErrRepositoryNotFound: the server has no such repository.
	ErrRepositoryNotFound = errors.New("repository not found")
	// ErrInvalidRepository: the repository URL or credentials are malformed.
	ErrInvalidRepository = errors.New("invalid repository")
)

// Error is the error every Source returns for a failed operation. It names
// the repository by its redacted URL, never by anything secret, and wraps the
// cause (usually one of the sentinel errors of this package).
type Error struct {
	// Repository is the redacted repository URL.
	Repository string
	// Op is the operation: "resolve", "fetch", "snapshot", "diff".
	Op string
	// Revision is the revision the operation was about, if any.
	Revision string
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Revision != "" {
		return fmt.Sprintf("source %s: %s %s: %v", e.Repository, e.Op, e.Revision, e.Err)
	}
	return fmt.Sprintf("source %s: %s: %v", e.Repository, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
