package diff

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestWriteYAMLRoundTrip checks that the diff's YAML reads back as the
// same object, over the corpus and over strings chosen to look like other
// types, multi-line text and special characters.
func TestWriteYAMLRoundTrip(t *testing.T) {
	var objs []map[string]any
	files, _ := filepath.Glob("testdata/corpus/*.yaml")
	for _, f := range files {
		c := loadCorpusCase(t, f)
		objs = append(objs, c.Desired, c.LiveCSA, c.LiveSSA)
	}
	objs = append(objs, map[string]any{
		"strings": []any{"true", "no", "NULL", "~", "1.5", "0x1F", "1e3", "12:30", "-", "- a", "a: b", "#x", "&a", "*a",
			"", " lead", "trail ", "multi\nline\n", "multi\nline", "  indented\nblock", "tab\there", "quote\"s", "back\\slash",
			"ünïcode", "+masked-abc+", "{}", "[]", "a b", "1_000", ".inf", "y"},
		"nested":  []any{[]any{"a", map[string]any{"b": []any{}}}, map[string]any{}, []any{}, map[string]any{"x": map[string]any{"y": "z"}}},
		"numbers": map[string]any{"i": int64(-3), "f": 2.5, "b": false, "n": nil},
		"config":  "line one\n\nline three\n",
	})
	for i, obj := range objs {
		var b strings.Builder
		writeYAML(&b, obj)
		var back map[string]any
		if err := yaml.Unmarshal([]byte(b.String()), &back); err != nil {
			t.Fatalf("object %d: %v\n%s", i, err, b.String())
		}
		norm := func(m map[string]any) map[string]any {
			u := &unstructured.Unstructured{Object: deepCopyMap(m)}
			normalizeValue(u.Object, nil, true)
			return u.Object
		}
		if ch := compareObjects(norm(obj), norm(back), nil); len(ch) > 0 {
			t.Errorf("object %d does not round-trip: %v\n%s", i, ch, b.String())
		}
	}
}
