// Package resource is the leaf every other package shares: the identity of a
// Kubernetes object (Key), the decoding of YAML and JSON manifest streams into
// unstructured objects under hard limits, the annotation and label keys that
// give an object its place in a sync (Argo CD compatible), the parsing of the
// comma-separated sync and compare options, and the tracking id that ties a
// live object to the application and the engine instance that own it.
//
// Decoding is where untrusted bytes first meet the engine, so it is strict
// about cost: a stream may hold at most so many bytes and documents, a
// document at most so many bytes, and YAML aliases may expand to at most so
// many nodes, which refuses a "billion laughs" document after looking at a
// few hundred bytes, with memory bounded by the input. Every error is a
// *DecodeError that names the file and the document index, and wraps one of
// the sentinel errors (ErrTooLarge, ErrTooManyDocuments, ErrAliasExpansion,
// ErrSyntax, ErrNotObject, ErrMissingKind) so callers can tell them apart with
// errors.Is.
//
// Scalars follow the YAML rules of kubectl and the API server (YAML 1.1 as
// implemented by sigs.k8s.io/yaml), so a manifest decodes here exactly as
// kubectl apply would read it.
package resource
