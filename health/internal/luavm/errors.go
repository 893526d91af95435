package luavm

import (
	"errors"
	"fmt"
)

// Sentinel errors; an *Error wraps exactly one of them.
var (
	// ErrSyntax: the script does not parse or compile.
	ErrSyntax = errors.New("syntax error")
	// ErrRuntime: the script raised an error (error(), a nil index, ...).
	ErrRuntime = errors.New("runtime error")
	// ErrTimeout: the script ran longer than Limits.Timeout.
	ErrTimeout = errors.New("time limit exceeded")
	// ErrInstructionLimit: the script executed more than
	// Limits.MaxInstructions VM instructions.
	ErrInstructionLimit = errors.New("instruction limit exceeded")
	// ErrMemoryLimit: the script built a string longer than
	// Limits.MaxStringBytes, or allocated more string bytes or table
	// entries in one call than its budget allows.
	ErrMemoryLimit = errors.New("memory limit exceeded")
	// ErrStackOverflow: recursion or the value stack went past
	// Limits.CallStackSize or Limits.RegistryMaxSize.
	ErrStackOverflow = errors.New("stack overflow")
	// ErrForbidden: the script called a function the sandbox removes
	// (dofile, loadfile, load, require, os.execute, io.*, ...) or wrote
	// to a shared library table.
	ErrForbidden = errors.New("forbidden in the sandbox")
	// ErrCanceled: the caller's context ended.
	ErrCanceled = errors.New("canceled")
)

// Error reports why a script failed. Script is the name the caller gave it
// (for health scripts "group/Kind" or a file path); Detail is gopher-lua's
// message, with a line number when it has one.
type Error struct {
	// Script names the script.
	Script string
	// Kind is one of the sentinel errors of this package.
	Kind error
	// Detail is the interpreter's message, possibly empty.
	Detail string
}

// Error implements error.
func (e *Error) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("lua script %s: %v", e.Script, e.Kind)
	}
	return fmt.Sprintf("lua script %s: %v: %s", e.Script, e.Kind, e.Detail)
}

// Unwrap returns Kind, so errors.Is(err, ErrTimeout) works.
func (e *Error) Unwrap() error { return e.Kind }
