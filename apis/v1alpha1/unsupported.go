package v1alpha1

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kubegitops/gitops/internal/strictload"
)

// ErrUnsupported is wrapped by the error of an Argo CD field this engine
// does not implement: the loaders refuse it by name rather than drop it.
var ErrUnsupported = errors.New("an Argo CD field this engine does not implement")

// unsupportedFields are the Argo CD fields (of argo-cd v3.6) the model
// has no place for, and why: none today (tagPrefix and retry.refresh were
// the last), the list kept for the fields a later Argo CD adds. A path under "source." stands for every
// source of an Application (spec.source, spec.sources[], and the dry source
// spec.sourceHydrator.drySource).
var unsupportedFields = map[string]string{}

// explainUnsupported rewrites the "unknown field" errors of err that name
// an Argo CD field in unsupportedFields, so they say so and why.
func explainUnsupported(kind string, err error) error {
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var le *LoadError
		if !errors.As(e, &le) || !errors.Is(le.Err, strictload.ErrUnknownField) {
			continue
		}
		if why, ok := unsupportedWhy(kind, le.Path); ok {
			le.Err = fmt.Errorf("%w: %s", ErrUnsupported, why)
		}
	}
	return err
}

// unsupportedWhy looks a field path ("spec.sources[1].tagPrefix") up in
// unsupportedFields.
func unsupportedWhy(kind, path string) (string, bool) {
	p := indexless(path)
	if why, ok := unsupportedFields[kind+" "+p]; ok {
		return why, true
	}
	if kind == ApplicationKind {
		for _, place := range []string{"spec.source.", "spec.sources[].", "spec.sourceHydrator.drySource."} {
			if rest, ok := strings.CutPrefix(p, place); ok {
				if why, ok := unsupportedFields[kind+" source."+rest]; ok {
					return why, true
				}
			}
		}
	}
	return "", false
}

// indexless turns "a[0].b[12]" into "a[].b[]".
func indexless(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '[' {
			if j := strings.IndexByte(p[i:], ']'); j > 0 {
				b.WriteString("[]")
				i += j
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// UnsupportedFields returns the Argo CD fields of kind (AppProjectKind,
// ApplicationKind) that the model has no place for and the loaders refuse
// by name, keyed by path ("spec.sourceHydrator"; for an Application,
// "source." stands for every source), each with why it is refused. Every
// field of Argo CD v3.6's Application and AppProject has a place: none is
// refused today.
func UnsupportedFields(kind string) map[string]string {
	out := map[string]string{}
	for k, why := range unsupportedFields {
		if path, ok := strings.CutPrefix(k, kind+" "); ok {
			out[path] = why
		}
	}
	return out
}
