package imageupdate

import (
	"errors"
	"fmt"
)

// The classes of failure. Every error this package returns wraps one of
// them in an *Error that names the application (and the image or file).
var (
	// ErrAnnotation: an image updater annotation is malformed, unknown or
	// names something this package does not implement.
	ErrAnnotation = errors.New("invalid image updater annotation")
	// ErrConstraint: a version constraint or tag pattern does not parse.
	ErrConstraint = errors.New("invalid version constraint")
	// ErrRegistry: the registry refused, failed or answered with something
	// that is not a valid registry response.
	ErrRegistry = errors.New("registry error")
	// ErrTimeout: a registry or Git call did not finish in time.
	ErrTimeout = errors.New("timed out")
	// ErrTooManyTags: a repository lists more tags than Options.MaxTags.
	ErrTooManyTags = errors.New("too many tags")
	// ErrCredentials: registry or Git credentials could not be obtained.
	ErrCredentials = errors.New("credentials unavailable")
	// ErrWriteBackTarget: the write-back file does not exist or cannot be
	// edited as asked.
	ErrWriteBackTarget = errors.New("invalid write-back target")
	// ErrGit: cloning, committing or pushing failed.
	ErrGit = errors.New("git write-back failed")
	// ErrNoCandidate is never returned as a failure: an image without an
	// eligible tag is reported as Skipped. It is exported so callers can
	// recognise ImageResult.Skip reasons.
	ErrNoCandidate = errors.New("no eligible tag")
)

// Error is an image updater failure with the identity of what failed.
type Error struct {
	// App is the application's name.
	App string
	// Subject is the image alias, image name or file the failure concerns
	// (may be empty).
	Subject string
	// Err is the cause; errors.Is matches the Err* classes above.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Subject == "" {
		return fmt.Sprintf("imageupdate: application %q: %v", e.App, e.Err)
	}
	return fmt.Sprintf("imageupdate: application %q: %s: %v", e.App, e.Subject, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func errorf(class error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", class, fmt.Sprintf(format, args...))
}
