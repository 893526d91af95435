package v1alpha1

import (
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validate checks a source hydrator as Argo CD does (its CRD's rules and
// its controller's): a dry source that is a valid source, a sync branch, a
// sync path that is not the repository's root, and a hydrateTo branch when
// hydrateTo is set.
func (h *SourceHydrator) validate(at string) field.ErrorList {
	var errs field.ErrorList
	dry := h.GetDrySource()
	errs = append(errs, dry.validate(at+".drySource")...)
	if h.SyncSource.TargetBranch == "" {
		errs = append(errs, required(at+".syncSource.targetBranch", ""))
	}
	if IsRootPath(h.SyncSource.Path) {
		errs = append(errs, fieldErrorf(at+".syncSource.path", "must name a folder below the repository's root, got %q: the hydrator never writes to the root", h.SyncSource.Path))
	} else if IsAbsolutePath(h.SyncSource.Path) {
		errs = append(errs, fieldErrorf(at+".syncSource.path", "must be relative to the repository root, got the absolute path %q", h.SyncSource.Path))
	} else if c := path.Clean(h.SyncSource.Path); c == ".." || strings.HasPrefix(c, "../") {
		errs = append(errs, fieldErrorf(at+".syncSource.path", "must stay inside the repository, got %q", h.SyncSource.Path))
	}
	if h.HydrateTo != nil && h.HydrateTo.TargetBranch == "" {
		errs = append(errs, required(at+".hydrateTo.targetBranch", "when hydrateTo is set"))
	}
	return errs
}

// IsRootPath reports whether p names the root of a repository ("", ".",
// "/", "./", "a/.."): the one place a source hydrator never writes to.
func IsRootPath(p string) bool {
	c := path.Clean("/" + p)
	return c == "/"
}
