package apidocs

import (
	"bytes"
	"fmt"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// ref is one Go name a document mentions.
type ref struct {
	where string // file:line
	text  string // as written, for the message
	// pkgs are the import paths the name may live in (a package name can
	// be that of several packages; any one that has it will do).
	pkgs []string
	// path is the name's first identifier and the members after it:
	// ["Options", "Workers"].
	path []string
	// ownType: the first identifier may be prose when no candidate has
	// it (an unqualified Type.Member); only a missing member is stale.
	ownType bool
}

var (
	// A qualified name in backticks: the package (name or module path),
	// then an exported identifier and members, optionally called.
	codeSpan  = regexp.MustCompile("`([^`\n]+)`")
	qualified = regexp.MustCompile(`^([a-z][a-z0-9]*(?:/[a-z0-9]+)*)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:$|[(\[{ ])`)
	// A type and its member, unqualified.
	member = regexp.MustCompile(`^([A-Z][A-Za-z0-9_]*)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)*)(?:$|[(\[{ ])`)
	// A package folder of the module, in backticks.
	pkgPath = regexp.MustCompile(`^[a-z0-9]+(?:/[a-z0-9]+)+$`)
	// In a doc comment's prose: qualified names, and Type.Member.
	proseQualified = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./])([a-z][a-z0-9]*(?:/[a-z0-9]+)*)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)*)`)
	proseMember    = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./])([A-Z][A-Za-z0-9_]*)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)*)`)
)

// modulePackages lists the module's packages by name and by
// module-relative path (the root is "gitops" and "").
type modulePackages struct {
	module string
	byName map[string][]string
	byRel  map[string]string
}

func listPackages(t *testing.T, root string) modulePackages {
	t.Helper()
	out := goCmd(t, root, "list", "-f", "{{.ImportPath}} {{.Name}}", "./...")
	mp := modulePackages{byName: map[string][]string{}, byRel: map[string]string{}}
	mp.module = strings.TrimSpace(string(goCmd(t, root, "list", "-m")))
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, name, _ := strings.Cut(line, " ")
		if name == "main" {
			continue
		}
		mp.byName[name] = append(mp.byName[name], path)
		mp.byRel[strings.TrimPrefix(strings.TrimPrefix(path, mp.module), "/")] = path
	}
	return mp
}

// candidates returns the packages a qualifier may name: a module package of
// that name or module path, else a standard library package of that path
// (prose mentions sync.Mutex as well as our sync.Result).
func (mp modulePackages) candidates(qual string) (pkgs []string, std string) {
	if p, ok := mp.byRel[qual]; ok && strings.Contains(qual, "/") {
		pkgs = []string{p}
	} else {
		pkgs = append(pkgs, mp.byName[qual]...)
	}
	if qual == mp.module[strings.LastIndex(mp.module, "/")+1:] {
		pkgs = append(pkgs, mp.module)
	}
	return pkgs, qual
}

func goCmd(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// readmeRefs returns the Go names README.md mentions in backticks:
// package-qualified ones (`engine.Options.Workers`, `state.NewConfigMapStore(...)`)
// and members of the root package's types (`Engine.Upsert`).
func readmeRefs(root string, mp modulePackages) ([]ref, []string, error) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, nil, err
	}
	var refs []ref
	var dirs []string
	oldColumn := false
	for i, line := range strings.Split(string(data), "\n") {
		where := fmt.Sprintf("README.md:%d", i+1)
		// A table whose first column is headed "old" lists names that are
		// gone on purpose: that column is not checked.
		if !strings.HasPrefix(line, "|") {
			oldColumn = false
		} else if cells := strings.Split(line, "|"); len(cells) > 2 {
			if h := strings.ToLower(strings.TrimSpace(cells[1])); strings.HasPrefix(h, "old") {
				oldColumn = true
				continue
			}
			if oldColumn {
				line = strings.Join(cells[2:], "|")
			}
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			span := m[1]
			if q := qualified.FindStringSubmatch(span); q != nil {
				if pkgs, std := mp.candidates(q[1]); len(pkgs) > 0 {
					refs = append(refs, ref{where: where, text: span, pkgs: append(pkgs, std), path: strings.Split(q[2], ".")})
				}
				continue
			}
			if q := member.FindStringSubmatch(span); q != nil {
				refs = append(refs, ref{where: where, text: span, pkgs: []string{mp.module}, path: append([]string{q[1]}, strings.Split(q[2], ".")...), ownType: true})
				continue
			}
			if pkgPath.MatchString(span) {
				if _, ours := mp.byRel[strings.Split(span, "/")[0]]; ours {
					dirs = append(dirs, where+" "+span)
				}
			}
		}
	}
	return refs, dirs, nil
}

// docRefs returns the Go names the comments of a doc.go mention:
// qualified names of module packages, and Type.Member where Type is a name
// of the doc.go's own package (other capitalised pairs are prose).
func docRefs(root, path string, mp modulePackages) ([]ref, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(root, filepath.Dir(path))
	self := mp.byRel[strings.TrimPrefix(filepath.ToSlash(rel), ".")]
	var refs []ref
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			where := fmt.Sprintf("%s:%d", mustRel(root, path), fset.Position(c.Pos()).Line)
			text := c.Text
			for _, q := range proseQualified.FindAllStringSubmatch(text, -1) {
				if pkgs, std := mp.candidates(q[1]); len(pkgs) > 0 {
					refs = append(refs, ref{where: where, text: q[1] + "." + q[2], pkgs: append(pkgs, std), path: strings.Split(q[2], ".")})
				}
			}
			if self == "" {
				continue
			}
			for _, q := range proseMember.FindAllStringSubmatch(text, -1) {
				refs = append(refs, ref{where: where, text: q[1] + "." + q[2], pkgs: []string{self}, path: append([]string{q[1]}, strings.Split(q[2], ".")...), ownType: true})
			}
		}
	}
	return refs, nil
}

func mustRel(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// loadTypes imports the packages at paths from the export data go list
// -export writes (with -race, as make test compiles them, so they are
// found in the build cache); a path go list does not know is left out.
func loadTypes(t *testing.T, root string, paths []string) map[string]*types.Package {
	t.Helper()
	args := append([]string{"list", "-e", "-export", "-race", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, paths...)
	out := goCmd(t, root, args...)
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	pkgs := map[string]*types.Package{}
	for _, p := range paths {
		if _, ok := exports[p]; !ok {
			continue
		}
		pkg, err := imp.Import(p)
		if err != nil {
			t.Fatalf("import %s: %v", p, err)
		}
		pkgs[p] = pkg
	}
	return pkgs
}

// resolve reports whether r names something in one of its packages, and
// whether its first identifier was found at all.
func resolve(r ref, pkgs map[string]*types.Package) (ok, first bool) {
	for _, p := range r.pkgs {
		pkg := pkgs[p]
		if pkg == nil {
			continue
		}
		obj := pkg.Scope().Lookup(r.path[0])
		if obj == nil || !obj.Exported() {
			continue
		}
		first = true
		if members(obj, r.path[1:]) {
			return true, true
		}
	}
	return false, first
}

// members reports whether each of path is a field or method of what the
// one before it is (obj first).
func members(obj types.Object, path []string) bool {
	for _, name := range path {
		if _, isFunc := obj.(*types.Func); isFunc {
			return false
		}
		next, _, _ := types.LookupFieldOrMethod(obj.Type(), true, obj.Pkg(), name)
		if next == nil {
			return false
		}
		obj = next
	}
	return true
}

// notGo are the file and text of names that look like Go and are not.
var notGo = map[string]bool{
	"notify/doc.go sync.GetInfoItem": true, // a function of Argo CD's notification templates
}

// TestDocNamesExist fails naming each Go name that README.md (in
// backticks) or a doc.go (in its comments) mentions and that does not
// exist: a package-qualified name of the module's packages
// (`engine.Options.Workers`, state.NewConfigMapStore) with its fields and
// methods, a member of a package's own type (Options.Workers in engine's
// doc.go; Engine.Upsert in the README, a root name), a package folder of
// the module in the README.
func TestDocNamesExist(t *testing.T) {
	root := moduleRoot(t)
	mp := listPackages(t, root)
	refs, dirs, err := readmeRefs(root, mp)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := mustRel(root, path)
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || rel == "bench" || rel == "sops") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "doc.go" {
			return nil
		}
		r, err := docRefs(root, path, mp)
		refs = append(refs, r...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) < 100 {
		t.Fatalf("found %d names in README.md and the doc.go files, want many more: is the parser broken?", len(refs))
	}
	need := map[string]bool{}
	for _, r := range refs {
		for _, p := range r.pkgs {
			need[p] = true
		}
	}
	var paths []string
	for p := range need {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	pkgs := loadTypes(t, root, paths)
	checked := 0
	for _, r := range refs {
		ok, first := resolve(r, pkgs)
		switch {
		case len(r.path[0]) == 1:
			// gitops.X: a placeholder.
		case notGo[r.where[:strings.LastIndex(r.where, ":")]+" "+r.text]:
		case ok:
			checked++
		case r.ownType && !first:
			// Capitalised prose, not a name of the package.
		default:
			t.Errorf("%s: %s names no Go identifier (looked in %s)", r.where, r.text, strings.Join(r.pkgs, ", "))
		}
	}
	for _, d := range dirs {
		where, dir, _ := strings.Cut(d, " ")
		if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() {
			t.Errorf("%s: %s is no folder of the module", where, dir)
		}
	}
	t.Logf("%d names resolved, %d folders", checked, len(dirs))
}
