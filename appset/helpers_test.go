package appset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const repoURL = "https://git.example.com/org/config.git"

// writeTree writes files (path -> content) under a new temporary folder.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadOne loads a single ApplicationSet from YAML.
func loadOne(t testing.TB, doc string) *ApplicationSet {
	t.Helper()
	sets, err := Load(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(sets) != 1 {
		t.Fatalf("loaded %d sets", len(sets))
	}
	return &sets[0]
}

// names returns the generated Applications' names.
func names(apps []*unstructured.Unstructured) []string {
	out := make([]string, len(apps))
	for i, a := range apps {
		out[i] = a.GetName()
	}
	return out
}

func field(t testing.TB, a *unstructured.Unstructured, path ...string) string {
	t.Helper()
	v, ok, err := unstructured.NestedString(a.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s: no string at %v (%v)", a.GetName(), path, err)
	}
	return v
}

func generate(t testing.TB, set *ApplicationSet, opts Options) Result {
	t.Helper()
	res, err := Generate(context.Background(), set, opts)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	return res
}
