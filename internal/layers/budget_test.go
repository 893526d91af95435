package layers

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// budget is the most packages `go list -deps ./engine` may list (the
// lean core and everything it builds, the standard library included). It
// was 963 before the image updater, the chart source, CEL, Redis and
// kubeconfig loading left the core (BENCHMARKS.md, "A lean core within a
// budget"); every host of package engine, and every add-on, pays for each
// package in it.
const budget = 800

// TestLeanCoreWithinItsBudget fails when the lean core builds more than
// budget packages, naming the imports that brought them: the edges whose
// cut alone brings the core back within its budget, fewest packages (the
// most specific) first, each with the chain of imports from the engine to
// it; when no single edge does, the heaviest imports of the module's
// packages.
func TestLeanCoreWithinItsBudget(t *testing.T) {
	g := importGraph(t, core)
	n := len(g.reach(core, edge{}))
	t.Logf("go list -deps %s: %d packages (budget %d)", core, n, budget)
	if n <= budget {
		return
	}
	t.Errorf("go list -deps %s lists %d packages, past the lean core's budget of %d by %d.\n%s",
		core, n, budget, n-budget, g.explain(core, n, n-budget))
}

// graph is the import graph of the packages a package builds.
type graph struct {
	imports map[string][]string
}

// edge is one import; the zero edge is none.
type edge struct{ from, to string }

// importGraph returns the graph of `go list -deps pkg`.
func importGraph(t *testing.T, pkg string) graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-test=false", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", pkg)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v: %s", pkg, err, stderr.String())
	}
	g := graph{imports: map[string][]string{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		g.imports[f[0]] = f[1:]
	}
	return g
}

// reach returns the packages from builds, without the import cut, each
// with the package that first imported it on a shortest chain.
func (g graph) reach(from string, cut edge) map[string]string {
	seen := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range g.imports[p] {
			if _, ok := seen[q]; ok || (edge{p, q}) == cut {
				continue
			}
			seen[q] = p
			queue = append(queue, q)
		}
	}
	return seen
}

// weighed is an import and the packages only it brings in.
type weighed struct {
	edge
	only int
}

// explain names the imports of the module's packages (the ones a change
// here can cut) by the packages only each brings into from's build, and
// the chain of imports that reaches each.
func (g graph) explain(from string, total, excess int) string {
	parents := g.reach(from, edge{})
	var all []weighed
	for p := range parents {
		if p != root && !strings.HasPrefix(p, root+"/") {
			continue
		}
		for _, q := range g.imports[p] {
			if only := total - len(g.reach(from, edge{p, q})); only > 0 {
				all = append(all, weighed{edge{p, q}, only})
			}
		}
	}
	var enough []weighed
	for _, w := range all {
		if w.only >= excess {
			enough = append(enough, w)
		}
	}
	var b strings.Builder
	if len(enough) > 0 {
		sort.Slice(enough, func(i, j int) bool { return enough[i].only < enough[j].only })
		b.WriteString("Cutting any one of these imports brings it back within the budget (the packages only it brings in; the import; the chain from the engine):\n")
		writeEdges(&b, enough, parents)
		return b.String()
	}
	sort.Slice(all, func(i, j int) bool { return all[i].only > all[j].only })
	if len(all) > 10 {
		all = all[:10]
	}
	b.WriteString("No single import brings it back within the budget; the heaviest imports of the module's packages (the packages only each brings in; the import; the chain from the engine):\n")
	writeEdges(&b, all, parents)
	return b.String()
}

// writeEdges writes one line per import: its weight, the import and the
// chain of imports from the engine to it.
func writeEdges(b *strings.Builder, ws []weighed, parents map[string]string) {
	for i, w := range ws {
		if i == 8 {
			break
		}
		chain := []string{short(w.to)}
		for p := w.from; p != ""; p = parents[p] {
			chain = append([]string{short(p)}, chain...)
		}
		fmt.Fprintf(b, "  %4d  %s imports %s   (%s)\n", w.only, short(w.from), short(w.to), strings.Join(chain, " -> "))
	}
}

// short drops the module path from a package of the module.
func short(pkg string) string {
	if pkg == root {
		return "gitops"
	}
	return strings.TrimPrefix(pkg, root+"/")
}
