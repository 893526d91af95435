package config

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"sigs.k8s.io/yaml"
)

const appSetHeader = `# Generated from the Go types (v1alpha1.ApplicationSetSpec and
# v1alpha1.ApplicationSetStatus) by
#   go test ./examples/operator/config -run TestAppSetCRDMatchesTypes -update
# Do not edit by hand.
`

// openValue is a node that keeps whatever it is given.
func openValue() map[string]any { return map[string]any{"x-kubernetes-preserve-unknown-fields": true} }

// appSetSchemaOf is schemaOf's rule for the ApplicationSet types it
// cannot walk alone: raw JSON (list elements, a template's spec, a
// provider's config) keeps any value, checked when the set generates; and
// a matrix or merge generator's generators are typed one level down, with
// their own matrix and merge open, as in Argo CD's CRD (the type is
// recursive).
func appSetSchemaOf(t reflect.Type) (map[string]any, bool) {
	switch t {
	case reflect.TypeFor[json.RawMessage]():
		return openValue(), true
	case reflect.TypeFor[v1alpha1.MatrixGenerator](), reflect.TypeFor[v1alpha1.MergeGenerator]():
		return fieldsSchema(t, func(f reflect.StructField) map[string]any {
			if f.Type == reflect.TypeFor[[]v1alpha1.ApplicationSetGenerator]() {
				return map[string]any{"type": "array", "items": fieldsSchema(f.Type.Elem(), nestedGeneratorField)}
			}
			return schemaOf(f.Type)
		}), true
	}
	return nil, false
}

// nestedGeneratorField is the schema of a field of a matrix's or merge's
// generator.
func nestedGeneratorField(f reflect.StructField) map[string]any {
	if f.Name == "Matrix" || f.Name == "Merge" {
		s := openValue()
		s["type"] = "object"
		return s
	}
	return schemaOf(f.Type)
}

// fieldsSchema is schemaOf of a struct without inline fields, with field
// giving each field's schema.
func fieldsSchema(t reflect.Type, field func(reflect.StructField) map[string]any) map[string]any {
	props := map[string]any{}
	var required []any
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		props[name] = describe(field(f), t.Name(), f.Name)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// generateAppSets returns the whole applicationsets.argoproj.io manifest.
func generateAppSets() ([]byte, error) {
	if _, err := modelDocs(); err != nil {
		return nil, err
	}
	spec := schemaOf(reflect.TypeFor[v1alpha1.ApplicationSetSpec]())
	spec["description"] = "The subset of Argo CD's ApplicationSet spec that the gitops engine implements."
	status := schemaOf(reflect.TypeFor[v1alpha1.ApplicationSetStatus]())
	status["description"] = "Written by the ApplicationSet controller through the status subresource, in Argo CD's shape."
	top := map[string]any{
		"type":     "object",
		"required": []any{"metadata", "spec"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string"},
			"kind":       map[string]any{"type": "string"},
			"metadata":   map[string]any{"type": "object"},
			"spec":       spec,
			"status":     status,
		},
	}
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":   "applicationsets.argoproj.io",
			"labels": map[string]any{"app.kubernetes.io/name": "applicationsets.argoproj.io", "app.kubernetes.io/part-of": "gitops"},
		},
		"spec": map[string]any{
			"group": "argoproj.io",
			"scope": "Namespaced",
			"names": map[string]any{"kind": "ApplicationSet", "listKind": "ApplicationSetList", "plural": "applicationsets",
				"singular": "applicationset", "shortNames": []any{"appset", "appsets"}},
			"versions": []any{map[string]any{
				"name": "v1alpha1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema":       map[string]any{"openAPIV3Schema": top},
			}},
		},
	}
	body, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	return append([]byte(appSetHeader), body...), nil
}

// TestAppSetCRDMatchesTypes proves the shipped ApplicationSet manifest is
// the schema of the v1alpha1 types the controller decodes (run with
// -update after changing them).
func TestAppSetCRDMatchesTypes(t *testing.T) {
	checkGenerated(t, "applicationsets.argoproj.io.yaml", ApplicationSetsCRD, generateAppSets, "TestAppSetCRDMatchesTypes")
}

// TestAppSetCRDDecodes checks the manifest's identity, and that it keeps
// unknown fields only where the types hold raw JSON or a nested matrix or
// merge.
func TestAppSetCRDDecodes(t *testing.T) {
	crd, err := AppSetCRD()
	if err != nil {
		t.Fatal(err)
	}
	if crd.Name != "applicationsets.argoproj.io" || crd.Spec.Group != "argoproj.io" || crd.Spec.Names.Kind != "ApplicationSet" ||
		strings.Join(crd.Spec.Names.ShortNames, ",") != "appset,appsets" || len(crd.Spec.Versions) != 1 ||
		crd.Spec.Versions[0].Name != "v1alpha1" || crd.Spec.Versions[0].Subresources == nil || crd.Spec.Versions[0].Subresources.Status == nil {
		t.Fatalf("unexpected CRD identity: %+v", crd.Spec.Names)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(ApplicationSetsCRD, &doc); err != nil {
		t.Fatal(err)
	}
	schema := doc["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
	var open []string
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if s["x-kubernetes-preserve-unknown-fields"] == true {
			open = append(open, path)
		}
		if p, ok := s["properties"].(map[string]any); ok {
			for k, v := range p {
				walk(path+"."+k, v.(map[string]any))
			}
		}
		if it, ok := s["items"].(map[string]any); ok {
			walk(path+"[]", it)
		}
	}
	walk("", schema)
	allowed := []string{".template.spec", ".list.elements[]", ".github", ".gitlab", ".gitea", ".bitbucket", ".bitbucketServer",
		".azureDevOps", ".azuredevops", ".awsCodeCommit", ".generators[].matrix", ".generators[].merge"}
	for _, p := range open {
		if !slices.ContainsFunc(allowed, func(a string) bool { return strings.HasSuffix(p, a) }) {
			t.Errorf("%s keeps unknown fields", p)
		}
	}
	for _, want := range []string{".spec.template.spec", ".spec.generators[].list.elements[]", ".spec.generators[].matrix.generators[].matrix"} {
		if !slices.Contains(open, want) {
			t.Errorf("%s should keep unknown fields", want)
		}
	}
	// The set's own generators and a matrix's are typed; a third level is not.
	props := func(s map[string]any, path ...string) map[string]any {
		for _, p := range path {
			s = s["properties"].(map[string]any)[p].(map[string]any)
			if it, ok := s["items"].(map[string]any); ok {
				s = it
			}
		}
		return s
	}
	if props(schema, "spec", "generators", "matrix", "generators", "git")["required"] == nil {
		t.Error("a matrix's git generator should be typed (repoURL required)")
	}
}
