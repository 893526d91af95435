package resource

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped by *DecodeError; test for them with errors.Is.
var (
	// ErrTooLarge: a stream or a document holds more bytes than allowed.
	ErrTooLarge = errors.New("too large")
	// ErrTooManyDocuments: a stream holds more documents (or list items) than allowed.
	ErrTooManyDocuments = errors.New("too many documents")
	// ErrAliasExpansion: YAML aliases would expand to more nodes than allowed
	// (a "billion laughs" document), or an anchor refers to itself.
	ErrAliasExpansion = errors.New("yaml alias expansion over the limit")
	// ErrSyntax: the bytes are not valid YAML or JSON.
	ErrSyntax = errors.New("syntax error")
	// ErrNotObject: a document is a scalar or a sequence, not a mapping.
	ErrNotObject = errors.New("not an object")
	// ErrMissingKind: an object lacks apiVersion or kind.
	ErrMissingKind = errors.New("apiVersion or kind missing")
)

// DecodeError reports why a manifest stream could not be decoded. It names
// the file and the zero-based index of the document in the stream (-1 when the
// error concerns the stream as a whole) and the line the document starts on.
// It never quotes the document's content, which may be a Secret.
type DecodeError struct {
	// File is the name the caller gave the stream, usually a path.
	File string
	// Document is the zero-based index of the document, or -1.
	Document int
	// Line is the one-based line on which the document starts, or 0.
	Line int
	// Err wraps one of the sentinel errors of this package.
	Err error
}

// Error implements error.
func (e *DecodeError) Error() string {
	file := e.File
	if file == "" {
		file = "<stream>"
	}
	if e.Document < 0 {
		return fmt.Sprintf("decode %s: %v", file, e.Err)
	}
	if e.Line > 0 {
		return fmt.Sprintf("decode %s: document %d (line %d): %v", file, e.Document, e.Line, e.Err)
	}
	return fmt.Sprintf("decode %s: document %d: %v", file, e.Document, e.Err)
}

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }
