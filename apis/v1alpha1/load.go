package v1alpha1

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubegitops/gitops/internal/strictload"
)

// LoadError reports one problem in a manifest of Applications, AppProjects
// or ApplicationSets: the document (zero-based), the line of the field at
// fault (or of the document), the field's path, and what is wrong. Its
// Error method reads "document N line L: path: what".
type LoadError = strictload.Error

// ValidationError lists every bad field of one object, as apimachinery's
// field.ErrorList (the form the API server's validation reports). An Argo
// CD field the engine refuses is a Forbidden field.Error whose detail
// starts with ErrUnsupported's text, and errors.Is(err, ErrUnsupported)
// holds for the ValidationError that has one.
//
// +kubebuilder:object:generate=false
type ValidationError struct {
	// Kind is the object's kind (Application, AppProject, ApplicationSet).
	Kind string
	// Namespace is the object's namespace.
	Namespace string
	// Name is the object's name.
	Name string
	// Fields are the problems, in field order of the checks; each names its
	// field path ("spec.sources[1].helm.version").
	Fields field.ErrorList
}

// Error implements error: `Application "ns/name" is invalid: path: what; ...`.
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, fe := range e.Fields {
		parts[i] = fe.Error()
	}
	id := e.Name
	if e.Namespace != "" {
		id = e.Namespace + "/" + e.Name
	}
	return fmt.Sprintf("%s %q is invalid: %s", e.Kind, id, strings.Join(parts, "; "))
}

// Unwrap returns the field errors, so errors.As finds a *field.Error.
func (e *ValidationError) Unwrap() []error {
	out := make([]error, len(e.Fields))
	for i, fe := range e.Fields {
		out[i] = fe
	}
	return out
}

// Is reports whether target is ErrUnsupported and a field is one the
// engine refuses.
func (e *ValidationError) Is(target error) bool {
	return target == ErrUnsupported && slices.ContainsFunc(e.Fields, isUnsupported)
}

func validationError(kind, namespace, name string, fes field.ErrorList) error {
	if len(fes) == 0 {
		return nil
	}
	return &ValidationError{Kind: kind, Namespace: namespace, Name: name, Fields: fes}
}

// LoadApplications reads Application manifests (a YAML or JSON stream) and
// decodes them strictly: an unknown field, a duplicate field, a value of the
// wrong type or a value that fails validation is an error naming the
// document, the line and the field. Every problem of every document is
// reported (errors.Join of *LoadError); nothing is returned with them.
//
// status and operation are what a controller wrote, not what the engine
// is asked to do: they are read leniently (fields this model lacks are
// dropped; a value of the wrong type is still an error), so the output of
// `kubectl get application -o yaml` loads. metadata is Kubernetes'
// ObjectMeta (managedFields included).
func LoadApplications(r io.Reader) ([]Application, error) {
	apps, err := strictload.LoadLenient(r, "gitops", APIVersion, ApplicationKind, []string{"status", "operation"},
		func(a *Application) []strictload.FieldError { return toStrict(a.validate()) })
	return apps, explainUnsupported(ApplicationKind, err)
}

// LoadProjects reads AppProject manifests as LoadApplications reads
// Applications; status is read leniently.
func LoadProjects(r io.Reader) ([]AppProject, error) {
	ps, err := strictload.LoadLenient(r, "gitops", APIVersion, AppProjectKind, []string{"status"},
		func(p *AppProject) []strictload.FieldError { return toStrict(p.validate()) })
	return ps, explainUnsupported(AppProjectKind, err)
}

// LoadApplicationSets reads ApplicationSet manifests as LoadApplications
// reads Applications, with ApplicationSet.Validate's checks; status is read
// leniently.
func LoadApplicationSets(r io.Reader) ([]ApplicationSet, error) {
	return strictload.LoadLenient(r, "appset", APIVersion, ApplicationSetKind, []string{"status"},
		func(s *ApplicationSet) []strictload.FieldError { return toStrict(s.validate()) })
}

// toStrict is the loader's form of fes: each field's path and what is
// wrong with it (wrapping ErrUnsupported for a field the engine refuses).
func toStrict(fes field.ErrorList) []strictload.FieldError {
	out := make([]strictload.FieldError, len(fes))
	for i, fe := range fes {
		err := errors.New(fe.ErrorBody())
		if isUnsupported(fe) {
			err = fmt.Errorf("%w%s", ErrUnsupported, strings.TrimPrefix(fe.Detail, ErrUnsupported.Error()))
		}
		out[i] = strictload.FieldError{Path: fe.Field, Err: err}
	}
	return out
}
