package gen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGroupMarkerReachesEveryName: a Deprecated paragraph on a group of
// constants or types in the engine becomes each root name's own marker,
// since linters (staticcheck's SA1019, gopls) read a marker only on the
// name's own comment; a name's own marker is kept, written once.
func TestGroupMarkerReachesEveryName(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "engine"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `package engine

// Colours.
//
// Deprecated: use the paint constants.
const (
	Red  = "red"
	// Blue is the sky's.
	Blue = "blue"
	// Green is grass.
	//
	// Deprecated: use paint.Green.
	Green = "green"
)

// Sizes.
const (
	Small = 1
)

// Shapes.
//
// Deprecated: use package shape.
type (
	// Circle is round.
	Circle struct{}
	Square struct{}
)
`
	if err := os.WriteFile(filepath.Join(dir, "engine", "colours.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if _, err := Generate("engine", []string{"Red", "Purple"}); err == nil || !strings.Contains(err.Error(), "Purple") {
		t.Fatalf("a front door name the engine lacks: %v, want an error naming it", err)
	}
	out, err := Generate("engine", []string{"Red", "Blue", "Green", "Small", "Circle", "Square"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "alias.go", out, parser.ParseComments)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := map[string]string{
		"Red": "Deprecated: use the paint constants.", "Blue": "Deprecated: use the paint constants.",
		"Green": "Deprecated: use paint.Green.", "Small": "",
		"Circle": "Deprecated: use package shape.", "Square": "Deprecated: use package shape.",
	}
	seen := map[string]bool{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok == token.IMPORT {
			continue
		}
		if gd.Lparen.IsValid() {
			t.Fatalf("alias.go groups declarations; each name needs its own comment:\n%s", out)
		}
		for _, s := range gd.Specs {
			var name string
			switch s := s.(type) {
			case *ast.ValueSpec:
				name = s.Names[0].Name
			case *ast.TypeSpec:
				name = s.Name.Name
			}
			seen[name] = true
			doc := gd.Doc.Text()
			marker, ok := want[name]
			if !ok {
				t.Fatalf("unexpected name %s", name)
			}
			if n := strings.Count(doc, "Deprecated:"); marker == "" && n != 0 || marker != "" && (n != 1 || !strings.Contains(doc, "\n\n"+marker+"\n")) {
				t.Errorf("%s: comment %q, want marker %q once, as a paragraph of its own", name, doc, marker)
			}
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("names %v, want %v", seen, want)
	}
}
