// Package apicheck compares the exported API of the module with the API of
// its last release, so that no exported name changes incompatibly by
// accident: make apicheck (a stage of make test) runs it through its
// command cmd/apicheck.
//
// The release is recorded in the committed file api/RELEASE, one line
// "<version> <commit>" (a clean clone in CI may carry no tags, but it has
// the commit). The check exports the release's API with golang.org/x/exp's
// apidiff from the release's tree (git archive of the commit into a
// temporary folder; the export is cached in the user cache per commit, so
// a machine computes it once), then compares it with the working tree's
// packages. internal/ packages are not the API (apidiff leaves them out),
// nor are the programs under examples/.
//
// Every incompatible change apidiff reports must be listed in
// CHANGELOG.md's "## Unreleased" section, in backticks, by its
// package-qualified name: the module-relative package path (the root
// package is "gitops"), a dot, then the name as apidiff gives it, a
// method's receiver without its star: `engine.Options.SyncWorkers`,
// `gitops.New`, `engine.Engine.Sync`,
// `imageupdate/controller.HeldOverride`. A listed name covers its fields
// and methods too (`engine.Options` covers `engine.Options.SyncWorkers`); a
// removed package is listed by its import path. Anything else fails the
// check with apidiff's lines, so a deliberate removal is one CHANGELOG
// line and an accidental one a failed build.
//
// apidiff itself is built from a module embedded here (module/*.txt)
// with internal/toolbuild, cached in the user cache like the other tools
// (make tools builds it first).
package apicheck
