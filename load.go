package gitops

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kubegitops/gitops/resource"
	yamlv3 "go.yaml.in/yaml/v3"
	sigsjson "sigs.k8s.io/json"
)

// LoadError reports one problem in a manifest of Applications or Projects:
// the document (zero-based), the line of the field at fault (or of the
// document), the field's path, and what is wrong.
type LoadError struct {
	Document int
	Line     int
	Path     string
	Err      error
}

// Error implements error: "document N line L: path: what".
func (e *LoadError) Error() string {
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
func (e *LoadError) Unwrap() error { return e.Err }

// LoadApplications reads Application manifests (a YAML or JSON stream) and
// decodes them strictly: an unknown field, a duplicate field, a value of the
// wrong type or a value that fails validation is an error naming the
// document, the line and the field. Every problem of every document is
// reported (errors.Join of *LoadError); nothing is returned with them.
func LoadApplications(r io.Reader) ([]Application, error) {
	return load(r, "Application", func(a *Application) []fieldError { return a.validate() })
}

// LoadProjects reads AppProject manifests as LoadApplications reads
// Applications.
func LoadProjects(r io.Reader) ([]Project, error) {
	return load(r, "AppProject", func(p *Project) []fieldError { return p.validate() })
}

// fieldError is a validation failure at a field path.
type fieldError struct {
	path string
	err  error
}

func fieldErrorf(path, format string, args ...any) fieldError {
	return fieldError{path: path, err: fmt.Errorf(format, args...)}
}

// maxManifestBytes bounds what a loader reads.
const maxManifestBytes = 16 << 20

func load[T any](r io.Reader, kind string, validate func(*T) []fieldError) ([]T, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxManifestBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("gitops: %s manifests over %d bytes", kind, maxManifestBytes)
	}
	var out []T
	var errs []error
	opts := resource.DefaultDecodeOptions()
	for i, doc := range resource.SplitDocuments(data) {
		// Decode applies the limits (sizes, alias bombs) and reports syntax
		// errors with their line.
		objs, err := resource.Decode(fmt.Sprintf("document %d", i), doc.Body, opts)
		if err != nil {
			errs = append(errs, &LoadError{Document: i, Line: doc.Line, Err: err})
			continue
		}
		if len(objs) == 0 {
			continue
		}
		if len(objs) > 1 || objs[0].GetKind() != kind || objs[0].GetAPIVersion() != "argoproj.io/v1alpha1" {
			errs = append(errs, &LoadError{Document: i, Line: doc.Line,
				Err: fmt.Errorf("want one argoproj.io/v1alpha1 %s, got %s %s", kind, objs[0].GetAPIVersion(), objs[0].GetKind())})
			continue
		}
		js, err := json.Marshal(objs[0].Object)
		if err != nil {
			errs = append(errs, &LoadError{Document: i, Line: doc.Line, Err: err})
			continue
		}
		lines := newLineIndex(doc.Body, doc.Line)
		var v T
		strict, err := sigsjson.UnmarshalStrict(js, &v)
		if err != nil {
			path := ""
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				path = te.Field
				err = fmt.Errorf("cannot be %s, want %s", te.Value, te.Type)
			}
			errs = append(errs, &LoadError{Document: i, Line: lines.of(path), Path: path, Err: err})
			continue
		}
		for _, se := range strict {
			path := ""
			var fe sigsjson.FieldError
			if errors.As(se, &fe) {
				path = fe.FieldPath()
			}
			what := "unknown field"
			if strings.HasPrefix(se.Error(), "duplicate field") {
				what = "duplicate field"
			}
			errs = append(errs, &LoadError{Document: i, Line: lines.of(path), Path: path, Err: errors.New(what)})
		}
		if len(strict) > 0 {
			continue
		}
		if fes := validate(&v); len(fes) > 0 {
			for _, fe := range fes {
				errs = append(errs, &LoadError{Document: i, Line: lines.of(fe.path), Path: fe.path, Err: fe.err})
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

// lineIndex finds the line of a field path ("spec.sources[1].helm") in a
// YAML document.
type lineIndex struct {
	root  *yamlv3.Node
	first int
}

func newLineIndex(body []byte, firstLine int) lineIndex {
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(body, &root); err != nil || len(root.Content) == 0 {
		return lineIndex{first: firstLine}
	}
	return lineIndex{root: root.Content[0], first: firstLine}
}

// of returns the line of the deepest node on path that exists, counted in
// the whole stream; the document's first line when none does.
func (l lineIndex) of(path string) int {
	if l.root == nil {
		return l.first
	}
	n, line := l.root, l.root.Line
	for _, tok := range splitPath(path) {
		next := child(n, tok)
		if next == nil {
			break
		}
		n, line = next, next.Line
	}
	return l.first + line - 1
}

func splitPath(path string) []string {
	var toks []string
	for _, part := range strings.Split(path, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				toks = append(toks, part)
				break
			}
			if i > 0 {
				toks = append(toks, part[:i])
			}
			j := strings.IndexByte(part, ']')
			if j < i {
				break
			}
			toks = append(toks, part[i:j+1])
			part = part[j+1:]
		}
	}
	return toks
}

func child(n *yamlv3.Node, tok string) *yamlv3.Node {
	for n.Kind == yamlv3.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == tok {
				return keyOrValue(n.Content[i], n.Content[i+1])
			}
		}
	case yamlv3.SequenceNode:
		if strings.HasPrefix(tok, "[") {
			idx, err := strconv.Atoi(strings.Trim(tok, "[]"))
			if err == nil && idx >= 0 && idx < len(n.Content) {
				return n.Content[idx]
			}
		}
	}
	return nil
}

// keyOrValue returns the value node, but with the key's line when the
// value is a block starting on a later line, so errors point at the key.
func keyOrValue(key, value *yamlv3.Node) *yamlv3.Node {
	if value.Kind == yamlv3.MappingNode || value.Kind == yamlv3.SequenceNode {
		c := *value
		c.Line = key.Line
		return &c
	}
	return value
}
