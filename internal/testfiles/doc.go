// Package testfiles writes trees of files for tests: the manifests
// repositories (local folders) that the engine, the operator example and
// the fault suite deploy from.
package testfiles
