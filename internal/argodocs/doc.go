// Package argodocs reads the files Argo CD ships for users to copy (its
// docs' example manifests, the notifications catalog, resource-action and
// health fixtures) from the zip of a released argo-cd module, as the Go
// module proxy serves it, so that tests apply Argo CD's own files as they
// are instead of a copy of ours.
//
// The zip is found in the Go module cache and downloaded there with
// `go mod download` the first time. The argo-cd module names a Go newer
// than this project's, so `go mod download` reports an error after it has
// stored the zip; the zip is used whenever it is there and whole (its
// ziphash written), whatever the command said.
//
// Nothing here is used at run time; it serves tests.
package argodocs
