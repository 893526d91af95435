// Package reftools builds the command-line tools this library is compared
// against in tests and benchmarks, from their Go modules: helm (the version
// the render package embeds) and kustomize (the CLI whose kustomize/api
// matches the one the render package embeds). Nothing here is used at run
// time: renderers call the SDKs in-process.
//
// The versions are pinned by the module in module/ (files with a .txt suffix,
// so they stay out of the library's own module), built once into the user
// cache by internal/toolbuild. make tools builds them (internal/testtools)
// before the tests run, so a test only finds them (ForTest); a test run
// outside make builds a missing one with no deadline.
package reftools
