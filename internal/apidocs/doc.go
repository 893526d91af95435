// Package apidocs holds the tests that keep the documentation a host reads
// true: every exported field of a public package has a doc comment
// (TestEveryExportedFieldIsDocumented), and every Go name the README and
// the packages' doc.go files mention exists (TestDocNamesExist), so that a
// rename or a removal fails the build instead of leaving a stale name.
//
// Public packages are those a host imports: not internal/, not examples/,
// not the separate bench and sops modules. Names are resolved with
// go/types from the export data go list -export writes (the standard
// library only: no package loader joins the module's dependencies).
package apidocs
