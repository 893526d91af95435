package filegraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Graph is the file reference graph of one package.
type Graph struct {
	// Package is the import path measured.
	Package string
	// Files are the package's non-test Go files, base names, sorted.
	Files []string
	// Refs maps a file to the files it refers to (never itself), sorted.
	Refs map[string][]string
}

// listed is what Load reads of `go list -json`.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	Error      *struct{ Err string }
}

// Load type-checks pkg (an import path or a ./relative pattern naming one
// package) in dir and returns its file graph. It runs `go list -export
// -deps`, which builds the export data of pkg's dependencies.
func Load(ctx context.Context, dir, pkg string) (*Graph, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-export", "-deps", "-json=ImportPath,Dir,GoFiles,Export,Error", pkg)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("filegraph: go list %s: %w: %s", pkg, err, strings.TrimSpace(stderr.String()))
	}
	exports := map[string]string{}
	var target listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("filegraph: go list %s: %w", pkg, err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("filegraph: %s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		target = p // -deps lists pkg last
	}
	return check(target, exports)
}

// check parses and type-checks the package and collects its references.
func check(p listed, exports map[string]string) (*Graph, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("filegraph: %w", err)
		}
		files = append(files, f)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("filegraph: no export data for %s", path)
		}
		return os.Open(file)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	tpkg, err := conf.Check(p.ImportPath, fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("filegraph: type-check %s: %w", p.ImportPath, err)
	}
	g := &Graph{Package: p.ImportPath, Files: slices.Sorted(slices.Values(p.GoFiles)), Refs: map[string][]string{}}
	fileOf := func(pos token.Pos) string { return filepath.Base(fset.Position(pos).Filename) }
	add := func(from token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != tpkg || !obj.Pos().IsValid() {
			return
		}
		if v, ok := obj.(*types.Var); ok && !v.IsField() && obj.Parent() != tpkg.Scope() {
			return // a local variable
		}
		if _, ok := obj.(*types.Func); !ok && obj.Parent() != nil && obj.Parent() != tpkg.Scope() {
			if v, isVar := obj.(*types.Var); !isVar || !v.IsField() {
				return // local types, constants and labels
			}
		}
		a, b := fileOf(from), fileOf(obj.Pos())
		if a != b && !slices.Contains(g.Refs[a], b) {
			g.Refs[a] = append(g.Refs[a], b)
		}
	}
	for id, obj := range info.Uses {
		add(id.Pos(), obj)
	}
	for sel, s := range info.Selections {
		add(sel.Sel.Pos(), s.Obj())
	}
	for _, refs := range g.Refs {
		slices.Sort(refs)
	}
	return g, nil
}

// Cycles returns the graph's strongly connected components of more than
// one file, largest first, each sorted by name (Tarjan's algorithm).
func (g *Graph) Cycles() [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	next := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range g.Refs[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		if len(comp) > 1 {
			slices.Sort(comp)
			out = append(out, comp)
		}
	}
	for _, f := range g.Files {
		if _, seen := index[f]; !seen {
			visit(f)
		}
	}
	slices.SortStableFunc(out, func(a, b []string) int { return len(b) - len(a) })
	return out
}

// Largest is the size of the largest reference cycle (1 when there is none).
func (g *Graph) Largest() int {
	if c := g.Cycles(); len(c) > 0 {
		return len(c[0])
	}
	return 1
}
