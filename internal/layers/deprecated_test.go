package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// deprecatedName is a name the root keeps for one release, and the name
// its marker says to use instead.
type deprecatedName struct {
	name, use string
	pos       token.Position
}

// useRE reads a marker's replacement: "Deprecated: use appstatus.Status."
var useRE = regexp.MustCompile(`(?m)^Deprecated: use ([A-Za-z0-9_.]+)\.$`)

// deprecatedRootNames reads the root's deprecated.go from the module root
// (dir): every name it declares, with the replacement its own comment's
// marker names. A name whose own comment carries no marker is an error:
// linters (staticcheck's SA1019, gopls) read a marker on the name's own
// comment only, not on the comment of the group it is part of.
func deprecatedRootNames(t *testing.T, dir string) []deprecatedName {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(dir, "deprecated.go"), nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []deprecatedName
	add := func(name *ast.Ident, doc *ast.CommentGroup, value ast.Expr) {
		pos := fset.Position(name.Pos())
		text := doc.Text()
		m := useRE.FindStringSubmatch(text)
		if m == nil || !strings.Contains("\n\n"+text, "\n\nDeprecated: ") {
			t.Errorf("%s: %s has no marker of its own (a paragraph \"Deprecated: use pkg.Name.\")", pos, name.Name)
			return
		}
		if got := exprString(value); value != nil && got != m[1] {
			t.Errorf("%s: %s is %s, but its marker says to use %s", pos, name.Name, got, m[1])
		}
		out = append(out, deprecatedName{name: name.Name, use: m[1], pos: pos})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			var called ast.Expr
			if len(d.Body.List) == 1 {
				if r, ok := d.Body.List[0].(*ast.ReturnStmt); ok && len(r.Results) == 1 {
					if c, ok := r.Results[0].(*ast.CallExpr); ok {
						called = c.Fun
					}
				}
			}
			if called == nil {
				t.Errorf("%s: %s must only return a call of its replacement", fset.Position(d.Pos()), d.Name.Name)
				continue
			}
			add(d.Name, d.Doc, called)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				doc := specDoc(d, s)
				switch s := s.(type) {
				case *ast.TypeSpec:
					add(s.Name, doc, s.Type)
				case *ast.ValueSpec:
					for i, n := range s.Names {
						var v ast.Expr
						if i < len(s.Values) {
							v = s.Values[i]
						}
						add(n, doc, v)
					}
				}
			}
		}
	}
	return out
}

// specDoc is the comment a linter reads for a spec: its own, or the
// declaration's when the declaration is not a parenthesised group.
func specDoc(d *ast.GenDecl, s ast.Spec) *ast.CommentGroup {
	var own *ast.CommentGroup
	switch s := s.(type) {
	case *ast.TypeSpec:
		own = s.Doc
	case *ast.ValueSpec:
		own = s.Doc
	}
	if own == nil && !d.Lparen.IsValid() {
		return d.Doc
	}
	return own
}

// exprString is "pkg.Name" for a selector, "" otherwise.
func exprString(e ast.Expr) string {
	if s, ok := e.(*ast.SelectorExpr); ok {
		if x, ok := s.X.(*ast.Ident); ok {
			return x.Name + "." + s.Sel.Name
		}
	}
	return ""
}

// TestDeprecatedRootNamesCarryMarkers fails when a name the root keeps
// for one release lacks a marker of its own (grouped constants included),
// when the marker names another replacement than the name is, or when
// CHANGELOG.md does not record the name with its replacement.
func TestDeprecatedRootNamesCarryMarkers(t *testing.T) {
	dir := filepath.Join("..", "..")
	names := deprecatedRootNames(t, dir)
	if len(names) == 0 {
		t.Fatal("deprecated.go declares no name")
	}
	changelog, err := os.ReadFile(filepath.Join(dir, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		row := regexp.MustCompile("(?m)^\\|[^\\n]*`gitops\\." + n.name + "`[^\\n]*\\|[^\\n]*`" + regexp.QuoteMeta(n.use) + "`")
		if !row.Match(changelog) {
			t.Errorf("CHANGELOG.md has no row for gitops.%s -> %s", n.name, n.use)
		}
	}
}

// TestEngineSpeaksOneVocabulary fails when package engine keeps a
// deprecated name of its own: it speaks appstatus, state and autosync.
func TestEngineSpeaksOneVocabulary(t *testing.T) {
	dir := filepath.Join("..", "..")
	deprecated := map[string]bool{}
	for _, n := range deprecatedRootNames(t, dir) {
		deprecated[n.name] = true
	}
	files, err := filepath.Glob(filepath.Join(dir, "engine", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, cg := range f.Comments {
			if strings.Contains("\n\n"+cg.Text(), "\n\nDeprecated: ") {
				t.Errorf("%s: package engine keeps a deprecated name; delete it (the root keeps it for one release)", fset.Position(cg.Pos()))
			}
		}
		for _, id := range topLevelNames(f) {
			if deprecated[id.Name] {
				t.Errorf("%s: package engine declares %s, which the root keeps only as a deprecated name", fset.Position(id.Pos()), id.Name)
			}
		}
	}
}

// topLevelNames are the names f declares at package level (functions,
// not methods).
func topLevelNames(f *ast.File) []*ast.Ident {
	var out []*ast.Ident
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				out = append(out, d.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					out = append(out, s.Name)
				case *ast.ValueSpec:
					out = append(out, s.Names...)
				}
			}
		}
	}
	return out
}

// TestNoDeprecatedRootNameOutsideTheRoot fails when a file of the module,
// or of its nested modules (bench, sops), names a deprecated root name:
// the project itself speaks the new names.
func TestNoDeprecatedRootNameOutsideTheRoot(t *testing.T) {
	dir := filepath.Join("..", "..")
	deprecated := map[string]string{}
	for _, n := range deprecatedRootNames(t, dir) {
		deprecated[n.name] = n.use
	}
	fset := token.NewFileSet()
	scanned := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != dir && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "vendor" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.Dir(path) == dir && (d.Name() == "deprecated.go" || d.Name() == "alias.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		local := ""
		for _, is := range f.Imports {
			if p, _ := strconv.Unquote(is.Path.Value); p == root {
				local = "gitops"
				if is.Name != nil {
					local = is.Name.Name
				}
			}
		}
		if local == "" || local == "_" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := s.X.(*ast.Ident); ok && x.Name == local {
					if use, ok := deprecated[s.Sel.Name]; ok {
						t.Errorf("%s: %s.%s is deprecated: use %s", fset.Position(s.Pos()), local, s.Sel.Name, use)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 500 {
		t.Fatalf("scanned %d Go files; the walk missed the module", scanned)
	}
}
