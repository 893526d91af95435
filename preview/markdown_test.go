package preview

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The Markdown of a change with a changed Secret, a changed ConfigMap, an
// added and a removed app is the golden file's.
func TestMarkdownGolden(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	head := r.commit(t, map[string]string{
		"plain/p1/cm.yaml":     configMap("p1", "v2"),
		"plain/p1/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ndata:\n  password: aHVudGVyMg==\n",
		"apps/appsets.yaml":    listSet("a", "c", "d") + envSet,
	})
	rep := runPreview(t, r.options(t, r.first, head))
	rep.Base, rep.Head = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	got := rep.Markdown(0)
	if strings.Contains(got, "aHVudGVyMg") || strings.Contains(got, "hunter2") {
		t.Fatal("a Secret value is in the Markdown")
	}
	golden := filepath.Join("testdata", "preview.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("Markdown differs from %s (go test -run TestMarkdownGolden -update):\n%s", golden, got)
	}
	// Bounded: a small limit keeps the table head and says what was cut.
	small := rep.Markdown(700)
	if len(small) > 700 || !strings.Contains(small, "Output cut to 700 bytes") {
		t.Fatalf("bounded Markdown (%d bytes):\n%s", len(small), small)
	}
}
