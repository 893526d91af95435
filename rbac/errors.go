package rbac

import (
	"errors"
	"fmt"
	"strings"
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

// ErrPermissionDenied is wrapped by every refusal (*DeniedError).
var ErrPermissionDenied = errors.New("permission denied")

// DeniedError is a refused request: what was asked, every subject checked
// and, for each, the policy line that refused it (with its source and
// line number) or that no line matched. It holds policy lines and subject
// names only, never a credential.
type DeniedError struct {
	// Resource, Action and Object are the request.
	Resource, Action, Object string
	// Checked are the subjects checked, in order (Decision.Checked).
	Checked []Check
	// Ignored are the subject's groups no g line binds, not checked.
	Ignored []string
}

// Error names the request and, for each subject checked, the line that
// refused it or "no line matched":
//
//	permission denied: applications, sync, team-b/api: alice: no line
//	matched; platform: denied by policy.csv line 3 "p, role:deployer,
//	applications, sync, team-b/*, deny"
func (e *DeniedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "permission denied: %s, %s, %s", e.Resource, e.Action, e.Object)
	if len(e.Checked) == 0 {
		b.WriteString(": no subject to check")
	}
	for i, c := range e.Checked {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(c.Subject)
		if c.Default {
			b.WriteString(" (policy.default)")
		}
		b.WriteString(": ")
		switch {
		case c.Reason != "":
			b.WriteString(c.Reason)
		case c.Allowed:
			fmt.Fprintf(&b, "allowed by %s %q, but a deny of another subject wins (DenyAcrossSubjects)", c.Rule.Where(), c.Rule.String())
		case c.Matched():
			fmt.Fprintf(&b, "denied by %s %q", c.Rule.Where(), c.Rule.String())
		default:
			b.WriteString("no line matched")
		}
	}
	if len(e.Ignored) > 0 {
		fmt.Fprintf(&b, " (groups bound to no role by a g line, not checked: %s)", strings.Join(e.Ignored, ", "))
	}
	return b.String()
}

// Unwrap returns ErrPermissionDenied.
func (e *DeniedError) Unwrap() error { return ErrPermissionDenied }
