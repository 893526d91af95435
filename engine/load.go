package engine

import (
	"io"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// LoadError reports one problem in a manifest of Applications or Projects:
// the document (zero-based), the line of the field at fault (or of the
// document), the field's path, and what is wrong. Its Error method reads
// "document N line L: path: what".
type LoadError = v1alpha1.LoadError

// LoadApplications reads Application manifests strictly; it is
// v1alpha1.LoadApplications.
func LoadApplications(r io.Reader) ([]Application, error) { return v1alpha1.LoadApplications(r) }

// LoadProjects reads AppProject manifests strictly; it is
// v1alpha1.LoadProjects.
func LoadProjects(r io.Reader) ([]Project, error) { return v1alpha1.LoadProjects(r) }

// ParseBackoffDuration reads a retry backoff duration as Argo CD does; it
// is v1alpha1.ParseBackoffDuration.
func ParseBackoffDuration(s string) (time.Duration, error) { return v1alpha1.ParseBackoffDuration(s) }
