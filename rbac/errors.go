package rbac

import (
	"errors"
	"fmt"
)

// The kinds of a bad configuration; an *Error wraps one of them.
var (
	// ErrUnknownKey: argocd-rbac-cm holds a key Argo CD does not read.
	ErrUnknownKey = errors.New("unknown argocd-rbac-cm key")
	// ErrInvalidValue: a key's value is not one Argo CD accepts
	// (policy.matchMode, scopes, server.rbac.log.enforce.enable).
	ErrInvalidValue = errors.New("invalid value")
	// ErrMalformedLine: a policy line is not a p or g line of the right
	// shape, or one of its patterns does not compile.
	ErrMalformedLine = errors.New("malformed policy line")
	// ErrProjectPolicy: a project role's policy line breaks the project
	// rules (subject proj:<project>:<role>, object in the project).
	ErrProjectPolicy = errors.New("invalid project role policy")
)

// Error is a bad piece of RBAC configuration: where it is, and what is
// wrong. Source names the argocd-rbac-cm key ("policy.csv") or the project
// role ("AppProject team-a spec.roles[0].policies"); Line is the 1-based
// line in that value (or the index+1 in the policies list), 0 when the
// error is about the whole value.
type Error struct {
	// Source is the argocd-rbac-cm key or the project role field.
	Source string
	// Line is the 1-based line (or list item), 0 for the whole value.
	Line int
	// Text is the offending line, empty for a whole value.
	Text string
	// Err is one of the Err* kinds, wrapped with the detail.
	Err error
}

// Error says where and what.
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Text != "":
		return fmt.Sprintf("rbac: %s line %d %q: %v", e.Source, e.Line, e.Text, e.Err)
	case e.Line > 0:
		return fmt.Sprintf("rbac: %s line %d: %v", e.Source, e.Line, e.Err)
	default:
		return fmt.Sprintf("rbac: %s: %v", e.Source, e.Err)
	}
}

// Unwrap returns the kind of error.
func (e *Error) Unwrap() error { return e.Err }
