package layers

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineNeverImportsAnAddon fails when package engine or the root
// package imports an add-on, directly or through another package. Such an
// import is often a cycle (an add-on over an engine imports it), which go
// list reports on the importing package.
func TestEngineNeverImportsAnAddon(t *testing.T) {
	for _, pkg := range []string{core, root} {
		checkNoAddon(t, pkg)
	}
}

// checkNoAddon fails when top imports an add-on.
func checkNoAddon(t *testing.T, top string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-deps", "-test=false", "-f",
		"{{.ImportPath}}{{with .Error}} ERROR: {{.Err}}{{end}}", top)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[len(lines)-1], top) {
		t.Fatalf("go list -deps %s listed %d packages, the last %q; want its dependencies, then it", top, len(lines), lines[len(lines)-1])
	}
	for _, line := range lines {
		pkg, loadErr, _ := strings.Cut(line, " ERROR: ")
		if loadErr != "" && strings.HasPrefix(pkg, root) {
			t.Errorf("%s: %s (an import of an add-on from the engine is a cycle)", pkg, loadErr)
		}
		if under(pkg, addons) {
			t.Errorf("%s imports the add-on %s; add-ons sit above the engine", top, pkg)
		}
	}
}
