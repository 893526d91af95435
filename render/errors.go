package render

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped by *PathError and by the renderers, so that callers
// can tell failures apart with errors.Is.
var (
	// ErrOutsideRoot: a path, or a symbolic link on the way to it, leaves the
	// root of the tree.
	ErrOutsideRoot = errors.New("path leaves the root")
	// ErrAbsolutePath: an absolute path (or an absolute symlink target) was
	// given where only paths relative to the root are accepted.
	ErrAbsolutePath = errors.New("absolute paths are not allowed")
	// ErrSymlinkLoop: resolving a path followed too many symbolic links.
	ErrSymlinkLoop = errors.New("too many levels of symbolic links")
	// ErrTooLarge: a file, or the sum of the files one render read, passed
	// its byte budget.
	ErrTooLarge = errors.New("too large")
	// ErrTooManyFiles: one render read more files than allowed.
	ErrTooManyFiles = errors.New("too many files")
	// ErrSchemeNotAllowed: a reference carries a URL scheme (https://,
	// file://, s3://, ...) that the renderer's policy does not allow.
	ErrSchemeNotAllowed = errors.New("URL scheme not allowed")
	// ErrRemoteDisabled: the render needs the network (a remote Kustomize
	// base, a Helm repository) and the renderer does not allow it.
	ErrRemoteDisabled = errors.New("remote access during render is disabled")
	// ErrNoRenderer: no renderer is configured for the detected tool.
	ErrNoRenderer = errors.New("no renderer for tool")
	// ErrInvalidInput: the Input (or its tool options) is malformed.
	ErrInvalidInput = errors.New("invalid render input")
)

// PathError reports a refused or failed file access. It names the operation
// and the path as the render asked for it (relative to the root), never the
// content of any file.
type PathError struct {
	Op   string // "open", "stat", "readdir", "resolve", ...
	Path string // slash-separated, as requested
	Err  error  // wraps one of the sentinel errors or an fs error
}

// Error implements error.
func (e *PathError) Error() string { return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err) }

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }

// Error is the error every renderer returns: it names the tool and the
// application path (and the application name when known) and wraps the cause.
type Error struct {
	// Tool is the renderer that failed.
	Tool Kind
	// AppName is the application's name, when known.
	AppName string
	// Path is the application's path in its source.
	Path string
	// Err is the cause.
	Err error
}

// Error implements error. A Tool left empty (the path could not be read
// to detect one) is said as such, never printed as an empty word.
func (e *Error) Error() string {
	tool := string(e.Tool)
	if tool == "" {
		tool = "(tool not detected)"
	}
	if e.AppName != "" {
		return fmt.Sprintf("render %s app %q at %s: %v", tool, e.AppName, e.Path, e.Err)
	}
	return fmt.Sprintf("render %s at %s: %v", tool, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns err wrapped in an *Error naming tool and in's application, or
// nil when err is nil. An err that already is an *Error is returned as is.
// An empty tool is the one ToolFor detects for in, when it can.
func Wrap(tool Kind, in Input, err error) error {
	if err == nil {
		return nil
	}
	var re *Error
	if errors.As(err, &re) {
		return err
	}
	if tool == "" {
		tool, _ = ToolFor(in)
	}
	return &Error{Tool: tool, AppName: in.AppName, Path: in.Path, Err: err}
}
