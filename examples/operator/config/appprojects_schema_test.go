package config

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"sigs.k8s.io/yaml"
)

const appProjectHeader = `# Generated from the Go type v1alpha1.AppProjectSpec (and the AppProject
# fields the model refuses, v1alpha1.UnsupportedFields) by
#   go test ./examples/operator/config -run TestAppProjectCRDMatchesTypes -update
# Do not edit by hand.
`

// withRefusedFields adds to the AppProject spec schema the Argo CD fields
// the model refuses (v1alpha1.UnsupportedFields), each keeping any value:
// the API server must keep them, so that the operator sees them and
// refuses the project by name, rather than prune them unseen.
func withRefusedFields(spec map[string]any) error {
	paths := v1alpha1.UnsupportedFields(v1alpha1.AppProjectKind)
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, path := range keys {
		node := spec
		parts := strings.Split(strings.TrimPrefix(path, "spec."), ".")
		for _, p := range parts[:len(parts)-1] {
			child, ok := node["properties"].(map[string]any)[strings.TrimSuffix(p, "[]")].(map[string]any)
			if !ok {
				return &unknownPathError{path}
			}
			if strings.HasSuffix(p, "[]") {
				child = child["items"].(map[string]any)
			}
			node = child
		}
		leaf := openValue()
		leaf["description"] = "Refused: the operator does not use a project that sets it (" + paths[path] + ")."
		node["properties"].(map[string]any)[parts[len(parts)-1]] = leaf
	}
	return nil
}

// unknownPathError is a refused field whose parent the schema lacks.
type unknownPathError struct{ path string }

func (e *unknownPathError) Error() string {
	return "refused AppProject field " + e.path + ": no such parent"
}

// generateAppProjects returns the whole appprojects.argoproj.io manifest.
func generateAppProjects() ([]byte, error) {
	if _, err := modelDocs(); err != nil {
		return nil, err
	}
	spec := schemaOf(reflect.TypeFor[v1alpha1.AppProjectSpec]())
	if err := withRefusedFields(spec); err != nil {
		return nil, err
	}
	spec["description"] = "The subset of Argo CD's AppProject spec that the gitops engine implements; the operator refuses a project that sets a field it does not."
	top := map[string]any{
		"type":     "object",
		"required": []any{"metadata", "spec"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string"},
			"kind":       map[string]any{"type": "string"},
			"metadata":   map[string]any{"type": "object"},
			"spec":       spec,
		},
	}
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":   "appprojects.argoproj.io",
			"labels": map[string]any{"app.kubernetes.io/name": "appprojects.argoproj.io", "app.kubernetes.io/part-of": "gitops"},
		},
		"spec": map[string]any{
			"group": "argoproj.io",
			"scope": "Namespaced",
			"names": map[string]any{"kind": "AppProject", "listKind": "AppProjectList", "plural": "appprojects",
				"singular": "appproject", "shortNames": []any{"appproj", "appprojs"}},
			"versions": []any{map[string]any{
				"name": "v1alpha1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": top},
			}},
		},
	}
	body, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	return append([]byte(appProjectHeader), body...), nil
}

// TestAppProjectCRDMatchesTypes proves the shipped AppProject manifest is
// the schema of v1alpha1.AppProjectSpec, which the operator decodes (run
// with -update after changing it).
func TestAppProjectCRDMatchesTypes(t *testing.T) {
	checkGenerated(t, "appprojects.argoproj.io.yaml", AppProjectsCRD, generateAppProjects, "TestAppProjectCRDMatchesTypes")
}

// TestAppProjectCRDDecodes checks the manifest's identity, and that it
// keeps unknown values only in the fields the operator refuses by name.
func TestAppProjectCRDDecodes(t *testing.T) {
	crd, err := AppProjectCRD()
	if err != nil {
		t.Fatal(err)
	}
	if crd.Name != "appprojects.argoproj.io" || crd.Spec.Group != "argoproj.io" || crd.Spec.Names.Kind != "AppProject" ||
		strings.Join(crd.Spec.Names.ShortNames, ",") != "appproj,appprojs" || len(crd.Spec.Versions) != 1 ||
		crd.Spec.Versions[0].Name != "v1alpha1" {
		t.Fatalf("unexpected CRD identity: %+v", crd.Spec.Names)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(AppProjectsCRD, &doc); err != nil {
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
	sort.Strings(open)
	// The refused fields, as the model's loaders name them.
	var want []string
	for path := range v1alpha1.UnsupportedFields(v1alpha1.AppProjectKind) {
		want = append(want, "."+path)
	}
	sort.Strings(want)
	if strings.Join(open, " ") != strings.Join(want, " ") {
		t.Errorf("fields keeping any value = %v, want the refused ones %v", open, want)
	}
}
