package gitops

import (
	"fmt"
	"io"

	"github.com/kubegitops/gitops/internal/strictload"
)

// LoadError reports one problem in a manifest of Applications or Projects:
// the document (zero-based), the line of the field at fault (or of the
// document), the field's path, and what is wrong. Its Error method reads
// "document N line L: path: what".
type LoadError = strictload.Error

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

func load[T any](r io.Reader, kind string, validate func(*T) []fieldError) ([]T, error) {
	return strictload.Load(r, "gitops", "argoproj.io/v1alpha1", kind, func(v *T) []strictload.FieldError {
		fes := validate(v)
		out := make([]strictload.FieldError, len(fes))
		for i, fe := range fes {
			out[i] = strictload.FieldError{Path: fe.path, Err: fe.err}
		}
		return out
	})
}
