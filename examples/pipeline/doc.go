// Package pipeline is a test to copy into a manifests repository: it runs
// in CI with `go test`, in seconds, and needs no cluster.
//
// The test (pipeline_test.go) loads the repository's Argo CD Applications
// (testdata/repo/apps.yaml here; your apps.yaml there) with
// gitops.LoadApplications, renders every app through the engine exactly as
// the engine would before a sync (plain YAML, Kustomize, Helm, Jsonnet),
// and then:
//
//   - checks policy on every rendered object (policy_test.go: resources set
//     on every container, no "latest" images, objects in the app's
//     namespace, no Secret in Git), a table a team extends with its own
//     rules, each failure naming the app and the object;
//   - compares the rendered objects with a recorded live state
//     (testdata/live/*.yaml, objects as read back from a cluster, with
//     managedFields and status) using the diff package, and asserts which
//     objects are in sync and which have drifted, with Secret values masked
//     in every diff.
//
// Rendering needs no cluster: offline_test.go gives the engine a cluster
// cache that answers the server version from a constant (Helm sees it as
// .Capabilities.KubeVersion) and fails the test if the engine sends a
// single request. testdata/bad is a repository that breaks every rule, to
// prove each check fails when it should.
//
// To adopt it: copy the three _test.go files, point repoDir at your
// repository's root, set clusterVersion, and record your live state with
// `kubectl get -o yaml` (or drop the diff test).
package pipeline
