package strictload

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kubegitops/gitops/resource"
	sigsjson "sigs.k8s.io/json"
)

// Error reports one problem in a manifest: the document (zero-based), the
// line of the field at fault (or of the document), the field's path, and
// what is wrong.
type Error struct {
	Document int
	Line     int
	Path     string
	Err      error
}

// Error implements error: "document N line L: path: what".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "document %d", e.Document)
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	if e.Path != "" {
		b.WriteString(": " + e.Path)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// FieldError is a validation failure at a field path ("spec.source.path").
type FieldError struct {
	Path string
	Err  error
}

// ErrUnknownField and ErrDuplicateField are the errors of a field the
// type does not have and of a field given twice.
var (
	ErrUnknownField   = errors.New("unknown field")
	ErrDuplicateField = errors.New("duplicate field")
)

// MaxBytes bounds what Load reads.
const MaxBytes = 16 << 20

// Load reads a stream of manifests of one apiVersion and kind and decodes
// each strictly into a T, then runs validate (nil: none) on it. Every
// problem of every document is reported (errors.Join of *Error); nothing
// is returned with them. prefix starts the message of a stream over
// MaxBytes ("gitops").
func Load[T any](r io.Reader, prefix, apiVersion, kind string, validate func(*T) []FieldError) ([]T, error) {
	return LoadLenient(r, prefix, apiVersion, kind, nil, validate)
}

// LoadLenient is Load, except that the top-level fields named in lenient
// (a controller's "status") are decoded leniently: their unknown fields
// are dropped, while a value of the wrong type is still an error.
func LoadLenient[T any](r io.Reader, prefix, apiVersion, kind string, lenient []string, validate func(*T) []FieldError) ([]T, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%s: %s manifests over %d bytes", prefix, kind, MaxBytes)
	}
	var out []T
	var errs []error
	opts := resource.DefaultDecodeOptions()
	for i, doc := range resource.SplitDocuments(data) {
		// Decode applies the limits (sizes, alias bombs) and reports syntax
		// errors with their line.
		objs, err := resource.Decode(fmt.Sprintf("document %d", i), doc.Body, opts)
		if err != nil {
			errs = append(errs, &Error{Document: i, Line: doc.Line, Err: err})
			continue
		}
		if len(objs) == 0 {
			continue
		}
		if len(objs) > 1 || objs[0].GetKind() != kind || objs[0].GetAPIVersion() != apiVersion {
			errs = append(errs, &Error{Document: i, Line: doc.Line,
				Err: fmt.Errorf("want one %s %s, got %s %s", apiVersion, kind, objs[0].GetAPIVersion(), objs[0].GetKind())})
			continue
		}
		strictPart, lenientPart := splitLenient(objs[0].Object, lenient)
		js, err := json.Marshal(strictPart)
		if err != nil {
			errs = append(errs, &Error{Document: i, Line: doc.Line, Err: err})
			continue
		}
		lines := newLineIndex(doc.Body, doc.Line)
		var v T
		derrs := Unmarshal(js, &v)
		if len(lenientPart) > 0 {
			derrs = append(derrs, unmarshalLenient(lenientPart, &v)...)
		}
		if len(derrs) > 0 {
			for _, fe := range derrs {
				errs = append(errs, &Error{Document: i, Line: lines.of(fe.Path), Path: fe.Path, Err: fe.Err})
			}
			continue
		}
		if validate == nil {
			out = append(out, v)
			continue
		}
		if fes := validate(&v); len(fes) > 0 {
			for _, fe := range fes {
				errs = append(errs, &Error{Document: i, Line: lines.of(fe.Path), Path: fe.Path, Err: fe.Err})
			}
			continue
		}
		out = append(out, v)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// splitLenient returns obj without the lenient top-level fields, and
// those fields alone.
func splitLenient(obj map[string]any, lenient []string) (map[string]any, map[string]any) {
	var part map[string]any
	for _, f := range lenient {
		if v, ok := obj[f]; ok {
			if part == nil {
				part = map[string]any{}
				rest := make(map[string]any, len(obj))
				for k, v := range obj {
					rest[k] = v
				}
				obj = rest
			}
			part[f] = v
			delete(obj, f)
		}
	}
	return obj, part
}

// unmarshalLenient decodes part over v, dropping unknown fields; a value
// of the wrong type is an error naming its path.
func unmarshalLenient(part map[string]any, v any) []FieldError {
	js, err := json.Marshal(part)
	if err != nil {
		return []FieldError{{Err: err}}
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, v); err != nil {
		return []FieldError{typeError(err)}
	}
	return nil
}

// typeError turns a decoding error into a FieldError naming the path of
// a value of the wrong type.
func typeError(err error) FieldError {
	path := ""
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path = te.Field
		err = fmt.Errorf("cannot be %s, want %s", te.Value, te.Type)
	}
	return FieldError{Path: path, Err: err}
}

// Unmarshal decodes JSON strictly into v: the errors name the field path
// of a value of the wrong type, an unknown field or a duplicate field.
// It is for objects built in memory (a generated manifest) as well as for
// Load's documents.
func Unmarshal(js []byte, v any) []FieldError {
	strict, err := sigsjson.UnmarshalStrict(js, v)
	if err != nil {
		return []FieldError{typeError(err)}
	}
	var out []FieldError
	for _, se := range strict {
		path := ""
		var fe sigsjson.FieldError
		if errors.As(se, &fe) {
			path = fe.FieldPath()
		}
		what := ErrUnknownField
		if strings.HasPrefix(se.Error(), "duplicate field") {
			what = ErrDuplicateField
		}
		out = append(out, FieldError{Path: path, Err: what})
	}
	return out
}
