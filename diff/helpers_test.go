package diff

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// mustObject parses one YAML object.
func mustObject(t testing.TB, s string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// mustObjectNoT parses one YAML object, nil on error.
func mustObjectNoT(s string) *unstructured.Unstructured {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return nil
	}
	return &unstructured.Unstructured{Object: m}
}

// mustDiffer builds a Differ or fails the test.
func mustDiffer(t testing.TB, opts Options) *Differ {
	t.Helper()
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// stripHistory returns live as a cluster cache keeps it by default: without
// managedFields and the last-applied annotation.
func stripHistory(live *unstructured.Unstructured) *unstructured.Unstructured {
	out := live.DeepCopy()
	out.SetManagedFields(nil)
	anns := out.GetAnnotations()
	delete(anns, "kubectl.kubernetes.io/last-applied-configuration")
	out.SetAnnotations(anns)
	return out
}

// corpusCase is one file of testdata/corpus.
type corpusCase struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	Expect       string         `json:"expect"`
	Modes        []Mode         `json:"modes"`
	Changes      []string       `json:"changes"`
	NeedsHistory bool           `json:"needsHistory"`
	Desired      map[string]any `json:"desired"`
	LiveCSA      map[string]any `json:"liveCSA"`
	LiveSSA      map[string]any `json:"liveSSA"`
}

func loadCorpusCase(t testing.TB, file string) corpusCase {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var c corpusCase
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return c
}
