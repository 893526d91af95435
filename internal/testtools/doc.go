// Package testtools builds every program the tests run, once, before they
// run (make tools, through its command cmd/testtools): the local
// cluster's programs and kubectl (testenv), the reference helm and
// kustomize (internal/reftools), apidiff for make apicheck
// (internal/apicheck), and the repository's own programs that
// tests run as programs, gitops-sops (internal/sopsexe) and gitopsctl,
// both with -race as vet and the tests compile every package. A test then
// only finds them, so its time never includes a build and no test sets a
// deadline on one; run outside make, each test builds what is missing with
// no deadline.
package testtools
