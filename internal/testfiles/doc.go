// Package testfiles is the test suites' one home for shared set-up:
//
//   - trees of files (Tree, Write, WebApp): the manifests repositories
//     (local folders) that the engine, the operator example and the fault
//     suite deploy from;
//   - Git repositories served over HTTP by a real Git server
//     (GitServer, GitRepo over internal/gitserver), closed when the test
//     ends, and commits and annotated tags pushed to them as a developer
//     pushes them, signed or not (GitPusher, with OpenPGP keys made by
//     GPGKey and exported as argocd-gpg-keys-cm holds them by
//     GPGPublicKey and GPGKeyID);
//   - the one custom resource definition the suites use (WidgetCRD), and
//     installing a CRD on a test cluster until it is ready to use
//     (InstallCRD for a CRD of the test's own, EnsureCRD for one the
//     tests of a package share).
//
// It imports no engine, so the engine's own (internal) tests use it too;
// the builders of engines on a test cluster live in testfiles/testengine.
package testfiles
