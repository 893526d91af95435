// Package strictload decodes argoproj.io manifests (Applications,
// AppProjects, ApplicationSets) strictly into Go types: a YAML or JSON
// stream is split into documents, each is decoded with package resource's
// limits (sizes, alias bombs), checked for its apiVersion and kind, and
// unmarshalled so that an unknown field, a duplicate field or a value of the
// wrong type is an error. Every error names the document, the line of the
// field at fault and the field's path; a caller-supplied validation adds its
// own field errors, placed on their lines the same way.
//
// Package apis/v1alpha1 loads all three kinds through it, so that they
// report bad manifests alike.
package strictload
