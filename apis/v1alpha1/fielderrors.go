package v1alpha1

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldErrorf is the field.Error of a bad value at path: Invalid (without
// the value) with the formatted detail, or Forbidden when the detail wraps
// ErrUnsupported (an Argo CD field the engine refuses).
func fieldErrorf(path, format string, args ...any) *field.Error {
	err := fmt.Errorf(format, args...)
	if errors.Is(err, ErrUnsupported) {
		return field.Forbidden(pathOf(path), err.Error())
	}
	return field.Invalid(pathOf(path), field.OmitValueType{}, err.Error())
}

// required is the field.Error of a missing field at path.
func required(path, detail string) *field.Error {
	return field.Required(pathOf(path), detail)
}

// isUnsupported reports a field.Error fieldErrorf made of ErrUnsupported.
func isUnsupported(fe *field.Error) bool {
	return fe.Type == field.ErrorTypeForbidden && strings.HasPrefix(fe.Detail, ErrUnsupported.Error())
}

// pathOf is the field.Path of a path written as its String form
// ("spec.sources[1].helm.version"): "." separates children, "[n]" is an
// index and "[k]" a key.
func pathOf(s string) *field.Path {
	var p *field.Path
	for _, part := range strings.Split(s, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if p == nil {
			p = field.NewPath(name)
		} else {
			p = p.Child(name)
		}
		for rest != "" {
			sub, after, _ := strings.Cut(rest, "]")
			if i, err := strconv.Atoi(sub); err == nil {
				p = p.Index(i)
			} else {
				p = p.Key(sub)
			}
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return p
}
