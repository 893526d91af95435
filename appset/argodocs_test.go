package appset

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/argodocs"
	"sigs.k8s.io/yaml"
)

// TestArgoCDApplicationSetReference: Argo CD's field reference,
// docs/operator-manual/applicationset.yaml of the current release, uses
// every generator (plugin, scmProvider with cloneProtocol, pullRequest
// with azuredevops, titleMatch and continueOnRepoNotFoundError) and
// preservedFields; the loader takes every one of those. What it refuses
// are the fields the file writes at a place Argo CD's own CRD
// (manifests/crds/applicationset-crd.yaml) has no such field, so that
// kubectl's strict validation refuses them too: each refused path is
// checked against that schema.
func TestArgoCDApplicationSetReference(t *testing.T) {
	rel := argodocs.ForTest(t)
	_, err := Load(bytes.NewReader(rel.MustReadFile(t, "docs/operator-manual/applicationset.yaml")))
	if err == nil {
		t.Fatal("the reference loads whole: the misplaced fields must now be checked against the CRD")
	}
	var crd map[string]any
	if err := yaml.Unmarshal(rel.MustReadFile(t, "manifests/crds/applicationset-crd.yaml"), &crd); err != nil {
		t.Fatal(err)
	}
	versions, _ := dig(crd, "spec", "versions").([]any)
	schema := dig(versions[0], "schema", "openAPIV3Schema")
	var paths []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var le *LoadError
		if !errors.As(e, &le) || !strings.Contains(le.Err.Error(), "unknown field") {
			t.Errorf("refused for another reason than a field Argo CD lacks: %v", e)
			continue
		}
		if inSchema(schema, le.Path) {
			t.Errorf("%s is a field of Argo CD's CRD, refused: %v", le.Path, e)
		}
		paths = append(paths, le.Path)
	}
	for _, want := range []string{"spec.generators[4].configMapRef", "spec.generators[8].configMapRef", "spec.generators[8].input", "spec.generators[5].pullRequest.awsCodeCommit"} {
		if !strings.Contains(strings.Join(paths, " "), want) {
			t.Errorf("%s not refused: %v", want, paths)
		}
	}
	for _, taken := range []string{"plugin", "preservedFields", "azuredevops", "titleMatch", "continueOnRepoNotFoundError", "cloneProtocol"} {
		if strings.Contains(strings.Join(paths, " "), taken) {
			t.Errorf("Argo CD's field %s refused: %v", taken, paths)
		}
	}
}

// dig walks maps by keys.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

var index = regexp.MustCompile(`\[\d+\]`)

// inSchema reports whether an OpenAPI v3 schema has the field at path
// ("spec.generators[4].configMapRef"), or leaves it open
// (x-kubernetes-preserve-unknown-fields).
func inSchema(schema any, path string) bool {
	for _, part := range strings.Split(index.ReplaceAllString(path, ".[]"), ".") {
		if part == "[]" {
			schema = dig(schema, "items")
			continue
		}
		if open, _ := dig(schema, "x-kubernetes-preserve-unknown-fields").(bool); open {
			return true
		}
		props, _ := dig(schema, "properties").(map[string]any)
		next, ok := props[part]
		if !ok {
			return false
		}
		schema = next
	}
	return true
}
