package diff

import (
	"errors"

	"github.com/kubegitops/gitops/resource"
)

// Error reports why one object could not be compared. Its message starts
// with the object's key ("apps/Deployment web/frontend: ...") and, for a
// Secret, has every secret value replaced by its placeholder.
type Error struct {
	// Key names the object.
	Key resource.Key
	// Err is the cause. For a Secret it is a plain error holding the
	// scrubbed message, so that no wrapped error can carry a value.
	Err error
}

// Error implements error.
func (e *Error) Error() string { return e.Key.String() + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// wrapError names the object and, for Secrets, scrubs the message. A
// *RuleError keeps its type (with a scrubbed cause) so callers can still
// find the rule at fault.
func wrapError(key resource.Key, err error, s *scrubber) error {
	if s == nil {
		return &Error{Key: key, Err: err}
	}
	var re *RuleError
	if errors.As(err, &re) {
		// jq quotes (and truncates) the values it chokes on: a truncated
		// value would escape scrubbing, so the cause is withheld.
		cause := errors.New("evaluation failed (details withheld for a Secret)")
		if errors.Is(re.Err, errJQTimeout) {
			cause = errJQTimeout
		}
		return &Error{Key: key, Err: &RuleError{Rule: re.Rule, Expression: s.text(re.Expression), Err: cause}}
	}
	return &Error{Key: key, Err: errors.New(s.text(err.Error()))}
}
