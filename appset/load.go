package appset

import (
	"io"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// LoadError reports one problem in an ApplicationSet manifest: the
// document (zero-based), the line of the field at fault, the field's path
// and what is wrong ("document N line L: path: what").
type LoadError = v1alpha1.LoadError

// Load reads ApplicationSet manifests (a YAML or JSON stream) and decodes
// them strictly: an unknown field, a duplicate field, a value of the wrong
// type or a spec this package cannot run (ApplicationSet.Validate) is an
// error naming the document, the line and the field. Every problem of
// every document is reported (errors.Join of *LoadError); nothing is
// returned with them. It is v1alpha1.LoadApplicationSets.
func Load(r io.Reader) ([]ApplicationSet, error) { return v1alpha1.LoadApplicationSets(r) }
