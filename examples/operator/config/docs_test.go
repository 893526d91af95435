package config

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

// modelDir is the source of package apis/v1alpha1, relative to this
// package's directory (where go test runs).
const modelDir = "../../../apis/v1alpha1"

// modelDocs are the doc comments of the struct fields of apis/v1alpha1,
// keyed "Type.Field" (an embedded field by its type's name), read once:
// each becomes the description of the field's property in the CRDs, which
// `kubectl explain` shows.
var modelDocs = sync.OnceValues(func() (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(modelDir, "*.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("read the model's doc comments: no Go files in %s (%v)", modelDir, err)
	}
	fset := token.NewFileSet()
	docs := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("read the model's doc comments: %w", err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, fl := range st.Fields.List {
				if fl.Doc == nil {
					continue
				}
				for _, name := range fieldNames(fl) {
					docs[ts.Name.Name+"."+name] = description(fl.Doc.Text())
				}
			}
			return false
		})
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no documented fields in %s", modelDir)
	}
	for k, d := range metaDocs {
		docs[k] = d
	}
	return docs, nil
})

// metaDocs describe the fields of the apimachinery types the model uses
// in the CRDs' schemas (a generator's label selectors, a project's
// resource lists), whose source is
// not in this module.
var metaDocs = map[string]string{
	"LabelSelector.MatchLabels":         "MatchLabels are labels that must all be present with these values.",
	"LabelSelector.MatchExpressions":    "MatchExpressions are requirements that must all hold.",
	"LabelSelectorRequirement.Key":      "Key is the label the requirement is about.",
	"LabelSelectorRequirement.Operator": "Operator is In, NotIn, Exists or DoesNotExist.",
	"LabelSelectorRequirement.Values":   "Values are the values In and NotIn compare with; empty for Exists and DoesNotExist.",
	"GroupKind.Group":                   "Group is the API group (\"\" for the core group; \"*\" matches any).",
	"GroupKind.Kind":                    "Kind is the resource kind (\"*\" matches any).",
}

// fieldNames are a struct field's names; an embedded field is named by
// its type.
func fieldNames(fl *ast.Field) []string {
	var out []string
	for _, n := range fl.Names {
		out = append(out, n.Name)
	}
	if len(fl.Names) == 0 {
		typ := fl.Type
		if star, ok := typ.(*ast.StarExpr); ok {
			typ = star.X
		}
		switch x := typ.(type) {
		case *ast.Ident:
			out = append(out, x.Name)
		case *ast.SelectorExpr:
			out = append(out, x.Sel.Name)
		}
	}
	return out
}

// description turns a doc comment into a schema description: the lines of
// a paragraph joined by spaces, paragraphs by a blank line, and
// kubebuilder markers ("+optional") left out.
func description(doc string) string {
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "+"):
		default:
			cur = append(cur, line)
		}
	}
	flush()
	return strings.Join(paras, "\n\n")
}

// describe sets s's description to the doc comment of field of struct
// typeName, if it has one, and returns s.
func describe(s map[string]any, typeName, field string) map[string]any {
	docs, err := modelDocs()
	if err != nil {
		return s // generate and generateAppSets report err
	}
	if d := docs[typeName+"."+field]; d != "" {
		s["description"] = d
	}
	return s
}

// TestCRDsDescribeFields proves the shipped manifests carry the model's
// doc comments, so `kubectl explain application.spec.source.repoURL`
// says what the field does: every property below the top level has a
// description, and spec.source.repoURL's is ApplicationSource.RepoURL's
// doc comment.
func TestCRDsDescribeFields(t *testing.T) {
	docs, err := modelDocs()
	if err != nil {
		t.Fatal(err)
	}
	for file, manifest := range map[string][]byte{"applications.argoproj.io.yaml": ApplicationsCRD, "applicationsets.argoproj.io.yaml": ApplicationSetsCRD,
		"appprojects.argoproj.io.yaml": AppProjectsCRD} {
		var doc map[string]any
		if err := yaml.Unmarshal(manifest, &doc); err != nil {
			t.Fatal(err)
		}
		schema := doc["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
		var missing []string
		var walk func(path string, s map[string]any)
		walk = func(path string, s map[string]any) {
			if p, ok := s["properties"].(map[string]any); ok {
				for k, v := range p {
					child := v.(map[string]any)
					if path != "" && child["description"] == nil {
						missing = append(missing, path+"."+k)
					}
					walk(path+"."+k, child)
				}
			}
			if it, ok := s["items"].(map[string]any); ok {
				walk(path+"[]", it)
			}
			if ap, ok := s["additionalProperties"].(map[string]any); ok {
				walk(path+"{}", ap)
			}
		}
		for _, top := range []string{"spec", "status", "operation"} {
			if s, ok := schema["properties"].(map[string]any)[top].(map[string]any); ok {
				if s["description"] == nil {
					missing = append(missing, "."+top)
				}
				walk("."+top, s)
			}
		}
		sort.Strings(missing)
		for _, m := range missing {
			t.Errorf("%s: %s has no description", file, m)
		}
		if file == "applications.argoproj.io.yaml" {
			props := schema["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)
			repoURL := props["source"].(map[string]any)["properties"].(map[string]any)["repoURL"].(map[string]any)
			if got, want := repoURL["description"], docs["ApplicationSource.RepoURL"]; got != want || want == "" {
				t.Errorf("spec.source.repoURL's description = %q, want ApplicationSource.RepoURL's doc comment %q", got, want)
			}
		}
	}
}
