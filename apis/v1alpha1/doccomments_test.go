package v1alpha1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// undocumented parses the package's non-test files and returns every
// exported identifier without a doc comment ("ApplicationSource.RepoURL",
// "type Foo", "func Bar") and the number of exported struct fields seen.
// A const or var inside a parenthesized group counts as documented when
// the group has a doc comment, as go doc shows it.
func undocumented(t *testing.T) (missing []string, fields, fieldsMissing int) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && d.Doc == nil {
					missing = append(missing, "func "+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						if s.Doc == nil && d.Doc == nil {
							missing = append(missing, "type "+s.Name.Name)
						}
						st, ok := s.Type.(*ast.StructType)
						if !ok {
							continue
						}
						for _, fl := range st.Fields.List {
							names := fieldNames(fl)
							for _, n := range names {
								if !ast.IsExported(n) {
									continue
								}
								fields++
								if fl.Doc == nil {
									fieldsMissing++
									missing = append(missing, s.Name.Name+"."+n)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Doc == nil && d.Doc == nil {
								missing = append(missing, d.Tok.String()+" "+n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(missing)
	return missing, fields, fieldsMissing
}

// fieldNames are a struct field's names; an embedded field is named by
// its type.
func fieldNames(fl *ast.Field) []string {
	if len(fl.Names) > 0 {
		out := make([]string, len(fl.Names))
		for i, n := range fl.Names {
			out[i] = n.Name
		}
		return out
	}
	typ := fl.Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.Ident:
		return []string{x.Name}
	case *ast.SelectorExpr:
		return []string{x.Sel.Name}
	}
	return nil
}

// TestEveryExportedIdentifierDocumented keeps the model documented: every
// exported type, function, constant, variable and struct field has a doc
// comment of its own (a field's comment is its description in the CRDs
// generated from these types, which `kubectl explain` shows).
func TestEveryExportedIdentifierDocumented(t *testing.T) {
	missing, fields, fieldsMissing := undocumented(t)
	t.Logf("exported struct fields: %d, documented: %d, undocumented: %d", fields, fields-fieldsMissing, fieldsMissing)
	if fields == 0 {
		t.Fatal("parsed no struct fields: is the test running in the package directory?")
	}
	for _, m := range missing {
		t.Errorf("%s has no doc comment", m)
	}
}
