package desired

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/source"
)

// ErrAppPathNotDir is wrapped by an *AppPathError whose path names a file,
// not a directory.
var ErrAppPathNotDir = errors.New("app path is not a directory")

// AppPathError reports a source path (spec.source.path,
// spec.sources[i].path or spec.sourceHydrator.syncSource.path) that does
// not name a directory of the revision fetched: it leaves the repository
// (Err wraps render.ErrOutsideRoot), does not exist there (fs.ErrNotExist)
// or is a file (ErrAppPathNotDir). It names the field and the revision,
// as Argo CD's "app path outside root" and "app path does not exist" do.
type AppPathError struct {
	// Field is the Application field that holds Path.
	Field string
	// Path is the path as written.
	Path string
	// Revision is the revision (commit or digest) it was looked for in.
	Revision string
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *AppPathError) Error() string {
	switch {
	case errors.Is(e.Err, render.ErrOutsideRoot):
		return fmt.Sprintf("%s %q: app path outside root: it leaves the repository", e.Field, e.Path)
	case errors.Is(e.Err, fs.ErrNotExist):
		return fmt.Sprintf("%s %q: app path does not exist in the repository at %s", e.Field, e.Path, e.Revision)
	case errors.Is(e.Err, ErrAppPathNotDir):
		return fmt.Sprintf("%s %q: app path is not a directory (at %s)", e.Field, e.Path, e.Revision)
	}
	return fmt.Sprintf("%s %q at %s: %v", e.Field, e.Path, e.Revision, e.Err)
}

// Unwrap returns the cause.
func (e *AppPathError) Unwrap() error { return e.Err }

// checkAppPath checks that source i of app, src, names a directory of
// its snapshot fsys at rev, as Argo CD's repo server checks an app path
// before it renders. An absolute path is renderInput's to refuse; a chart
// has no path.
func checkAppPath(app *v1alpha1.Application, i int, src v1alpha1.ApplicationSource, fsys fs.FS, rev source.Revision) error {
	if src.Chart != "" || v1alpha1.IsAbsolutePath(src.Path) {
		return nil
	}
	p := path.Clean(strings.TrimRight(src.Path, "/"))
	if p == "" || p == "." {
		return nil
	}
	fail := func(err error) error {
		return &AppPathError{Field: pathField(app, i), Path: src.Path, Revision: rev.Short(), Err: err}
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return fail(&render.PathError{Op: "resolve", Path: src.Path, Err: render.ErrOutsideRoot})
	}
	info, err := render.NewRoot(fsys, render.Limits{}).Stat(p)
	switch {
	case errors.Is(err, render.ErrOutsideRoot), errors.Is(err, fs.ErrNotExist):
		return fail(err)
	case err != nil:
		return nil // the renderer reports what else it meets
	case !info.IsDir():
		return fail(ErrAppPathNotDir)
	}
	return nil
}

// pathField names the field that holds the path of source i of app.
func pathField(app *v1alpha1.Application, i int) string {
	switch {
	case app.Spec.SourceHydrator != nil:
		return "spec.sourceHydrator.syncSource.path"
	case len(app.Spec.Sources) > 0:
		return fmt.Sprintf("spec.sources[%d].path", i)
	}
	return "spec.source.path"
}
