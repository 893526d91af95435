package config

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite applications.argoproj.io.yaml from the Go types")

const header = `# Generated from the Go types (v1alpha1.ApplicationSpec, v1alpha1.Operation
# and v1alpha1.ApplicationStatus of package apis/v1alpha1) by
#   go test ./examples/operator/config -run TestCRDMatchesTypes -update
# Do not edit by hand.
`

// notRequired are fields without omitempty that Argo CD's schema does not
// require; requiring them would refuse manifests Argo CD accepts.
var notRequired = map[string]bool{
	"HelmParameter.name": true, "HelmParameter.value": true,
	"HelmFileParameter.name": true, "HelmFileParameter.path": true,
	"ApplicationSourcePluginParameter.name": true,
}

// descriptions of the top-level fields.
var descriptions = map[string]string{
	"spec":      "The subset of Argo CD's Application spec that the gitops engine implements.",
	"operation": "A sync to run once; the controller records it in status.operationState and removes it.",
	"status":    "Written by the controller through the status subresource, in Argo CD's shape.",
}

// schemaOf builds the structural schema of a Go type from its JSON tags:
// fields without omitempty are required (but for notRequired), pointers
// are their element, intstr is int-or-string, metav1.Time a date-time
// string, and RawExtension (helm.valuesObject) the only open object.
func schemaOf(t reflect.Type) map[string]any {
	if s, ok := appSetSchemaOf(t); ok {
		return s
	}
	switch t {
	case reflect.TypeFor[intstr.IntOrString]():
		return map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}, "x-kubernetes-int-or-string": true}
	case reflect.TypeFor[metav1.Time]():
		return map[string]any{"type": "string", "format": "date-time"}
	case reflect.TypeFor[runtime.RawExtension]():
		return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Int, reflect.Int32:
		return map[string]any{"type": "integer"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		var required []any
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && strings.Contains(opts, "inline") {
				// An embedded struct's fields are the outer object's.
				in := schemaOf(f.Type)
				for k, v := range in["properties"].(map[string]any) {
					props[k] = v
				}
				if r, ok := in["required"].([]any); ok {
					required = append(required, r...)
				}
				continue
			}
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			props[name] = describe(schemaOf(f.Type), t.Name(), f.Name)
			if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") && !notRequired[t.Name()+"."+name] {
				required = append(required, name)
			}
		}
		s := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	panic("schemaOf: unsupported type " + t.String())
}

// generate returns the whole CRD manifest, with the model's field docs as
// descriptions.
func generate() ([]byte, error) {
	if _, err := modelDocs(); err != nil {
		return nil, err
	}
	top := map[string]any{
		"type":     "object",
		"required": []any{"metadata", "spec"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string"},
			"kind":       map[string]any{"type": "string"},
			"metadata":   map[string]any{"type": "object"},
			"spec":       schemaOf(reflect.TypeFor[v1alpha1.ApplicationSpec]()),
			"operation":  schemaOf(reflect.TypeFor[v1alpha1.Operation]()),
			"status":     schemaOf(reflect.TypeFor[v1alpha1.ApplicationStatus]()),
		},
	}
	for k, d := range descriptions {
		top["properties"].(map[string]any)[k].(map[string]any)["description"] = d
	}
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":   "applications.argoproj.io",
			"labels": map[string]any{"app.kubernetes.io/name": "applications.argoproj.io", "app.kubernetes.io/part-of": "gitops"},
		},
		"spec": map[string]any{
			"group": "argoproj.io",
			"scope": "Namespaced",
			"names": map[string]any{"kind": "Application", "listKind": "ApplicationList", "plural": "applications",
				"singular": "application", "shortNames": []any{"app", "apps"}},
			"versions": []any{map[string]any{
				"name": "v1alpha1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema":       map[string]any{"openAPIV3Schema": top},
				"additionalPrinterColumns": []any{
					map[string]any{"name": "Sync Status", "type": "string", "jsonPath": ".status.sync.status"},
					map[string]any{"name": "Health Status", "type": "string", "jsonPath": ".status.health.status"},
					map[string]any{"name": "Revision", "type": "string", "jsonPath": ".status.sync.revision", "priority": 10},
					map[string]any{"name": "Project", "type": "string", "jsonPath": ".spec.project", "priority": 10},
				},
			}},
		},
	}
	body, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	return append([]byte(header), body...), nil
}

// TestCRDMatchesTypes proves the shipped manifest is the schema of the
// model's types, which the controller reads and writes (run with -update after changing them).
func TestCRDMatchesTypes(t *testing.T) {
	checkGenerated(t, "applications.argoproj.io.yaml", ApplicationsCRD, generate, "TestCRDMatchesTypes")
}

// TestCRDDecodes checks the manifest's identity and that it keeps unknown
// fields only where Argo CD's schema does (helm.valuesObject).
func TestCRDDecodes(t *testing.T) {
	crd, err := CRD()
	if err != nil {
		t.Fatal(err)
	}
	if crd.Name != "applications.argoproj.io" || crd.Spec.Group != "argoproj.io" || crd.Spec.Names.Kind != "Application" ||
		strings.Join(crd.Spec.Names.ShortNames, ",") != "app,apps" || len(crd.Spec.Versions) != 1 ||
		crd.Spec.Versions[0].Name != "v1alpha1" || crd.Spec.Versions[0].Subresources == nil || crd.Spec.Versions[0].Subresources.Status == nil {
		t.Fatalf("unexpected CRD identity: %+v", crd.Spec.Names)
	}
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
	var doc map[string]any
	if err := yaml.Unmarshal(ApplicationsCRD, &doc); err != nil {
		t.Fatal(err)
	}
	schema := doc["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
	walk("", schema)
	for _, p := range open {
		if !strings.HasSuffix(p, ".helm.valuesObject") {
			t.Errorf("%s keeps unknown fields; only helm.valuesObject should", p)
		}
	}
	if len(open) == 0 {
		t.Error("helm.valuesObject should keep unknown fields, as in Argo CD")
	}
}

// checkGenerated fails unless shipped, the manifest in file, is what
// generate makes of the model's types now; with -update it writes the file
// instead. test names the test to run with -update.
func checkGenerated(t *testing.T, file string, shipped []byte, generate func() ([]byte, error), test string) {
	t.Helper()
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(shipped, want) {
		t.Fatalf("%s is not the schema of the Go types; run: go test ./examples/operator/config -run %s -update", file, test)
	}
}
