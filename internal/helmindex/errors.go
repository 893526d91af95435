package helmindex

import (
	"errors"
	"fmt"
)

// Sentinel errors, wrapped by *Error; test for them with errors.Is.
var (
	// ErrEmpty: the index has no bytes.
	ErrEmpty = errors.New("empty index.yaml")
	// ErrTooLarge: the index is past the size bound.
	ErrTooLarge = errors.New("index.yaml past its size bound")
	// ErrInvalid: the index is not a valid repository index (not YAML or
	// JSON, an unknown field, a field of the wrong type).
	ErrInvalid = errors.New("index.yaml is not a valid repository index")
	// ErrNoAPIVersion: the index has no apiVersion.
	ErrNoAPIVersion = errors.New("index.yaml has no apiVersion")
	// ErrNoChart: the index has no entry of that chart name.
	ErrNoChart = errors.New("no such chart in the repository")
	// ErrNoVersion: no version of the chart is the one asked for or
	// satisfies the constraint (or the constraint does not parse).
	ErrNoVersion = errors.New("no chart version matches")
	// ErrInvalidURL: a repository or chart URL does not parse.
	ErrInvalidURL = errors.New("invalid chart URL")
)

// Error is an error of a chart repository's index. It names the
// repository by its URL without user information, never credentials.
type Error struct {
	// Repository is the repository URL, redacted.
	Repository string
	// Chart and Version name the entry at fault, when there is one.
	Chart, Version string
	// Err is the cause, wrapping one of the sentinels.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	switch {
	case e.Chart != "" && e.Version != "":
		return fmt.Sprintf("chart repository %s: chart %s version %q: %v", e.Repository, e.Chart, e.Version, e.Err)
	case e.Chart != "":
		return fmt.Sprintf("chart repository %s: chart %s: %v", e.Repository, e.Chart, e.Err)
	}
	return fmt.Sprintf("chart repository %s: %v", e.Repository, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
