package controller

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kubegitops/gitops"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// SpecError reports an Application whose spec the engine cannot use: the
// CRD's schema let it through, but the engine's own validation (the same
// as gitops.LoadApplications') did not.
type SpecError struct {
	// App is "namespace/name" of the custom resource.
	App string
	// Problems are "field: what is wrong", one per problem.
	Problems []string
}

// Error implements error.
func (e *SpecError) Error() string {
	return fmt.Sprintf("application %s: invalid spec: %s", e.App, strings.Join(e.Problems, "; "))
}

// toApplication decodes the custom resource's metadata and spec as the
// engine's Application, with LoadApplications' strictness: unknown fields
// and invalid values are a *SpecError naming each field.
func toApplication(u *unstructured.Unstructured) (*gitops.Application, error) {
	meta := map[string]any{"name": u.GetName(), "namespace": u.GetNamespace()}
	if l := u.GetLabels(); len(l) > 0 {
		meta["labels"] = l
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		meta["annotations"] = a
	}
	doc := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": meta, "spec": u.Object["spec"]}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, &SpecError{App: nameOf(u), Problems: []string{err.Error()}}
	}
	apps, err := gitops.LoadApplications(bytes.NewReader(data))
	if err != nil {
		return nil, &SpecError{App: nameOf(u), Problems: loadProblems(err)}
	}
	if len(apps) != 1 {
		return nil, &SpecError{App: nameOf(u), Problems: []string{"spec: missing"}}
	}
	return &apps[0], nil
}

// loadProblems lists LoadApplications' errors as "field: what", without
// the document and line numbers, which mean nothing for a custom resource.
func loadProblems(err error) []string {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		var le *gitops.LoadError
		switch {
		case errors.As(e, &le) && le.Path != "":
			out = append(out, le.Path+": "+le.Err.Error())
		case errors.As(e, &le):
			out = append(out, le.Err.Error())
		default:
			out = append(out, e.Error())
		}
	}
	return out
}

// operationOf returns the resource's requested operation, or nil.
func operationOf(u *unstructured.Unstructured) (*Operation, error) {
	raw, ok := u.Object["operation"].(map[string]any)
	if !ok || raw == nil {
		return nil, nil
	}
	var op Operation
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &op); err != nil {
		return nil, fmt.Errorf("application %s: operation: %w", nameOf(u), err)
	}
	return &op, nil
}

// statusOf returns the resource's status; a status this controller cannot
// read (written by something else) is started afresh.
func statusOf(u *unstructured.Unstructured) ApplicationStatus {
	var st ApplicationStatus
	raw, ok := u.Object["status"].(map[string]any)
	if !ok {
		return st
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
		return ApplicationStatus{}
	}
	return st
}

// statusMap converts a status to the resource's representation.
func statusMap(st ApplicationStatus) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
}

func nameOf(u *unstructured.Unstructured) string { return u.GetNamespace() + "/" + u.GetName() }

// sameStatus reports whether two statuses are equal but for reconciledAt,
// compared in their serialised form (times at second precision).
func sameStatus(a, b ApplicationStatus) bool {
	a.ReconciledAt, b.ReconciledAt = nil, nil
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
