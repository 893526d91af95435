package appset

import (
	"errors"
	"fmt"
)

// The reasons a generation fails; an *Error wraps one of them, so
// errors.Is(err, ErrMissingKey) tells them apart.
var (
	// ErrMissingKey: a template used a parameter the set does not have,
	// under goTemplateOptions ["missingkey=error"].
	ErrMissingKey = errors.New("missing parameter")
	// ErrInvalidApplication: a rendered Application fails the loader.
	ErrInvalidApplication = errors.New("invalid generated Application")
	// ErrDuplicateName: two parameter sets render the same Application
	// name.
	ErrDuplicateName = errors.New("duplicate generated Application name")
	// ErrTooMany: a generator matched more files, directories or
	// parameter sets than Options allow.
	ErrTooMany = errors.New("too many")
	// ErrTemplateLoop: a template recursed or grew past its bounds.
	ErrTemplateLoop = errors.New("template loop or runaway output")
	// ErrNoProvider: an scmProvider, pullRequest or
	// clusterDecisionResource generator has no host-supplied provider.
	ErrNoProvider = errors.New("no provider")
)

// Error is a failed generation, naming the set, the generator (its index
// in spec.generators and kind; -1 for the set's template stage) and, when
// known, the Application.
type Error struct {
	// Set is the ApplicationSet's name.
	Set string
	// Generator is the generator's index in spec.generators; -1 for the
	// template stage.
	Generator int
	// Kind is the generator's kind (list, clusters, git, ...).
	Kind string
	// App is the Application's name, when known.
	App string
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	s := fmt.Sprintf("applicationset %q", e.Set)
	if e.Generator >= 0 {
		s += fmt.Sprintf(": generators[%d]", e.Generator)
		if e.Kind != "" {
			s += " (" + e.Kind + ")"
		}
	}
	if e.App != "" {
		s += fmt.Sprintf(": application %q", e.App)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
