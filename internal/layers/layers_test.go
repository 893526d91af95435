package layers

import (
	"os/exec"
	"strings"
	"testing"
)

// root is the engine's package.
const root = "github.com/kubegitops/gitops"

// below are the packages (each with its subpackages) beneath the engine:
// the vocabulary, the model, the stores and the machinery it is made of.
var below = []string{
	"resource", "apis", "appstatus", "state", "autosync", "source", "render", "cache",
	"diff", "health", "hooks", "sync", "project", "rbac", "notify",
}

// TestBelowTheEngineNeverImportsIt fails when a package below the engine
// imports the root package, directly or through another package.
func TestBelowTheEngineNeverImportsIt(t *testing.T) {
	// -e lists a package even when it cannot be loaded: a package below
	// the engine that the engine imports and that imports the engine is an
	// import cycle, reported in its Error.
	args := []string{"list", "-e", "-test=false", "-f",
		"{{.ImportPath}}{{range .Deps}} {{.}}{{end}}{{with .Error}} ERROR: {{.Err}}{{end}}"}
	for _, p := range below {
		args = append(args, root+"/"+p+"/...")
	}
	cmd := exec.Command("go", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < len(below) {
		t.Fatalf("go list listed %d packages, want at least %d", len(lines), len(below))
	}
	for _, line := range lines {
		line, loadErr, _ := strings.Cut(line, " ERROR: ")
		fields := strings.Fields(line)
		if loadErr != "" {
			t.Errorf("%s: %s (an import of the engine, %s, from below it is a cycle)", fields[0], loadErr, root)
		}
		for _, dep := range fields[1:] {
			if dep == root {
				t.Errorf("%s imports the engine (%s); it must stay below it", fields[0], root)
			}
		}
	}
}

// addOns are the packages (each with its subpackages) above the engine
// that use only its exported API, as Argo CD keeps its ApplicationSet
// controller apart: the engine must never import them.
var addOns = []string{"appset/controller"}

// TestEngineNeverImportsAddOns fails when the root package imports an
// add-on package, directly or through another package.
func TestEngineNeverImportsAddOns(t *testing.T) {
	// An add-on imports the engine, so an import of it from the engine is
	// a cycle: -e lists the root anyway, with the cycle in its Error.
	cmd := exec.Command("go", "list", "-e", "-test=false", "-deps", "-f",
		"{{.ImportPath}}{{with .Error}} ERROR: {{.Err}}{{end}}", root)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[len(lines)-1], root) {
		t.Fatalf("go list -deps %s listed %d packages, the last %q; want its dependencies, then it", root, len(lines), lines[len(lines)-1])
	}
	for _, line := range lines {
		pkg, loadErr, _ := strings.Cut(line, " ERROR: ")
		if loadErr != "" && strings.Contains(loadErr, "import cycle") {
			t.Errorf("%s: %s (does the engine import an add-on?)", pkg, loadErr)
		}
		for _, a := range addOns {
			if pkg == root+"/"+a || strings.HasPrefix(pkg, root+"/"+a+"/") {
				t.Errorf("the engine (%s) imports the add-on %s; add-ons sit above it", root, pkg)
			}
		}
	}
}
