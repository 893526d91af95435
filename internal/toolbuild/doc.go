// Package toolbuild builds programs pinned by a Go module that is embedded as
// text (go.mod.txt, go.sum.txt, tools.go.txt) and caches them in a folder of
// the user cache named after a hash of that module, so that a change of any
// pinned version never reuses stale binaries and an unchanged module is
// built only once per machine.
//
// The module never joins the library's own dependency set: it is written
// into the cache folder and built there with "go build -mod=readonly". A
// lock file serialises builds across processes, so test packages running in
// parallel build once and share the result, and each binary is renamed into
// place whole, so no reader ever sees a half-written one.
package toolbuild
