// Package v1alpha1 is the Argo CD model (argoproj.io/v1alpha1) as Go
// types: Application (spec, Argo CD's status with a bounded resource tree,
// operation), AppProject and ApplicationSet, with their lists, generated
// DeepCopy methods and AddToScheme, so that operators and portals use the
// same types as the engine, with no JSON round trip.
//
// The field names are Argo CD's, so manifests written for Argo CD load
// unchanged. LoadApplications, LoadProjects and LoadApplicationSets decode
// strictly: a field Argo CD has and the engine does not implement is an
// error naming the field and its line, never silently dropped (the test
// TestArgoCDFields walks every field of Argo CD's CRDs, listed in
// testdata/argocd-fields.txt). A controller's status and operation are
// read leniently, so `kubectl get application -o yaml` output loads.
// Validate checks an object built in memory as the loaders do.
//
// Every exported field has a doc comment saying what the engine does with
// it, and where it refuses a field Argo CD has or treats it differently
// (TestEveryExportedIdentifierDocumented fails on one without). The
// operator's CRDs (examples/operator/config) take their descriptions, which
// `kubectl explain` shows, from these comments.
//
// The package imports apimachinery and little else (TestModelDependencies
// keeps Helm, Kustomize, go-git, Lua, CEL, Redis, Jsonnet,
// controller-runtime and client-go's clients out), so importing the model
// costs a host a fraction of what importing the engine does. The rules of
// an AppProject (sources, destinations, kinds, sync windows, CEL policies,
// impersonation) are enforced by package project.
//
// zz_generated.deepcopy.go is written by controller-gen (`make generate`;
// `make generate-check` fails when it is stale).
//
// +kubebuilder:object:generate=true
// +groupName=argoproj.io
package v1alpha1
