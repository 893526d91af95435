// Package config holds the CustomResourceDefinitions of the Application,
// ApplicationSet and AppProject kinds the operator serves, embedded so
// that the operator and its tests install the exact manifests shipped in
// this folder (Install installs all three).
//
// The Application manifest declares argoproj.io/v1alpha1 Application with Argo CD's
// names (plural applications, short names app and apps) and a structural
// schema of the subset of Argo CD's Application that the engine
// implements: spec, operation (a sync) and status (v1alpha1.ApplicationSpec,
// Operation and ApplicationStatus of package apis/v1alpha1), with the
// status subresource. It is generated from those Go types (see
// schema_test.go), so it cannot drift from what the controller reads.
// Each property's description is the doc comment of its Go field
// (docs_test.go reads them from the model's source), so `kubectl explain
// application.spec.source` says what the engine does with each field.
// Only helm.valuesObject keeps unknown fields, as in Argo CD's own schema;
// everywhere else the API server prunes, or with strict field validation
// refuses, fields the engine would not honour.
//
// The ApplicationSet manifest (plural applicationsets, short names appset
// and appsets, status subresource) is generated the same way from
// v1alpha1.ApplicationSetSpec and v1alpha1.ApplicationSetStatus (see
// appsets_schema_test.go). The fields the types hold as raw JSON keep any
// value: list elements, a template's spec (checked as an Application when
// the set generates, and reported in the set's status), the configuration
// of scmProvider and pullRequest providers; and, as in Argo CD's schema, a
// matrix's or merge's generators are typed one level down, with a nested
// matrix or merge open.
//
// The AppProject manifest (plural appprojects, short names appproj and
// appprojs) is generated from v1alpha1.AppProjectSpec (see
// appprojects_schema_test.go): every field of Argo CD's AppProject has a
// place in it. An Argo CD field the model would refuse
// (v1alpha1.UnsupportedFields; none today) keeps any value, so that the
// API server stores it and the operator refuses the project naming the
// field, rather than prune it unseen.
package config
