package git

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/kubegitops/gitops/source"
)

// classify maps a transport error to this module's sentinels with a message
// that never repeats what the server sent (a response body may echo
// internal pages: server-side request forgery) and never holds a secret.
func classify(e endpoint, err error) error {
	err = unwrapPlumbing(err)
	var herr *githttp.Err
	var nerr net.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return errTimeout
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed),
		errors.Is(err, transport.ErrInvalidAuthMethod):
		return source.ErrAuthentication
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return source.ErrRepositoryNotFound
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return fmt.Errorf("remote repository is empty: %w", source.ErrRevisionNotFound)
	case errors.As(err, &herr):
		return fmt.Errorf("unexpected HTTP status %d", herr.StatusCode())
	case unreachable(err):
		return &redactedError{msg: e.redact(err.Error()), cause: source.ErrUnavailable}
	}
	return errors.New(e.redact(err.Error()))
}

// unreachable reports errors of reaching the server: refused or reset
// connections, no route, a name that does not resolve.
func unreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &op) || errors.As(err, &dns) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EHOSTUNREACH)
}

// unwrapPlumbing strips go-git's error wrappers, which do not implement
// Unwrap, so that errors.Is sees the cause.
func unwrapPlumbing(err error) error {
	for {
		switch e := err.(type) {
		case *plumbing.UnexpectedError:
			err = e.Err
		case *plumbing.PermanentError:
			err = e.Err
		default:
			return err
		}
	}
}

// wrapErr builds the *source.Error every exported method returns. The cause
// is classified: errors.Is against the source sentinels works on it.
func wrapErr(e endpoint, op, rev string, err error) error {
	if err == nil {
		return nil
	}
	var se *source.Error
	if errors.As(err, &se) {
		return err
	}
	return &source.Error{Repository: e.redacted, Op: op, Revision: rev, Err: classifyKeep(e, err)}
}

// classifyKeep classifies err but keeps it in the chain when it is already
// one of ours (so errors.Is still matches the sentinel it wraps).
func classifyKeep(e endpoint, err error) error {
	if errors.Is(err, source.ErrTimeout) {
		return errTimeout
	}
	for _, s := range []error{source.ErrURLNotAllowed, source.ErrRevisionNotFound, source.ErrAmbiguousRevision,
		source.ErrAuthentication, source.ErrTimeout, source.ErrRepositoryNotFound, source.ErrInvalidRepository, source.ErrUnavailable,
		ErrBranchMoved, ErrPushRejected} {
		if errors.Is(err, s) {
			return &redactedError{msg: e.redact(err.Error()), cause: s}
		}
	}
	return classify(e, err)
}

// errTimeout is source.ErrTimeout that also matches
// context.DeadlineExceeded, for callers that test for either.
var errTimeout error = timeoutError{}

type timeoutError struct{}

// Error implements error.
func (timeoutError) Error() string { return source.ErrTimeout.Error() }

// Is makes errors.Is(err, source.ErrTimeout) and errors.Is(err, context.DeadlineExceeded) hold.
func (timeoutError) Is(target error) bool {
	return target == source.ErrTimeout || target == context.DeadlineExceeded
}

// redactedError keeps a sentinel for errors.Is while replacing the message.
type redactedError struct {
	msg   string
	cause error
}

// Error implements error.
func (r *redactedError) Error() string { return r.msg }

// Unwrap implements errors.Unwrap.
func (r *redactedError) Unwrap() error { return r.cause }
