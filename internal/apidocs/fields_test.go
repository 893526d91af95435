package apidocs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// skipDir reports whether a folder holds no public package and none below:
// internal/, examples/, testdata, the separate modules bench and sops,
// hidden folders.
func skipDir(rel, base string) bool {
	return base == "internal" || base == "testdata" || strings.HasPrefix(base, ".") ||
		rel == "examples" || rel == "bench" || rel == "sops" || rel == "api"
}

// undocumentedFields returns "file:line Type.Field" for each exported field
// of an exported struct type in the public packages with neither a doc
// comment nor a line comment, nor named in the doc comment of the field
// before it (generated files and package main aside).
func undocumentedFields(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(d.Name(), "zz_generated") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				var prev *ast.CommentGroup
				for _, field := range st.Fields.List {
					doc := field.Doc
					if doc != nil || field.Comment != nil {
						prev = doc
						continue
					}
					for _, name := range field.Names {
						if name.IsExported() && !namedIn(prev, name.Name) {
							out = append(out, rel+":"+strconv.Itoa(fset.Position(name.Pos()).Line)+" "+ts.Name.Name+"."+name.Name)
						}
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
	return out
}

// namedIn reports whether the doc comment of the field before names
// field as a word ("QPS and Burst bound each client" documents Burst).
func namedIn(doc *ast.CommentGroup, field string) bool {
	if doc == nil {
		return false
	}
	for _, w := range strings.FieldsFunc(doc.Text(), func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if w == field {
			return true
		}
	}
	return false
}

// TestEveryExportedFieldIsDocumented fails naming each exported field of a
// public package's exported struct without a comment: the results and
// options a host reads say what each field holds.
func TestEveryExportedFieldIsDocumented(t *testing.T) {
	missing := undocumentedFields(t, moduleRoot(t))
	for _, m := range missing {
		t.Errorf("%s: exported field without a doc comment", m)
	}
}
