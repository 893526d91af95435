// Package config holds the CustomResourceDefinition of the Application
// kind the operator serves, embedded so that the operator and its tests
// install the exact manifest shipped in this folder.
//
// The manifest declares argoproj.io/v1alpha1 Application with Argo CD's
// names (plural applications, short names app and apps) and a structural
// schema of the subset of Argo CD's Application that the engine
// implements: spec, operation (a sync) and status (v1alpha1.ApplicationSpec,
// Operation and ApplicationStatus of package apis/v1alpha1), with the
// status subresource. It is generated from those Go types (see
// schema_test.go), so it cannot drift from what the controller reads.
// Only helm.valuesObject keeps unknown fields, as in Argo CD's own schema;
// everywhere else the API server prunes, or with strict field validation
// refuses, fields the engine would not honour.
package config
