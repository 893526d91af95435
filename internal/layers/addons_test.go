package layers

import (
	"os/exec"
	"strings"
	"testing"
)

// addons are the packages (each with its subpackages) above the engine
// that use only its exported API: the engine must never import them, so
// that a host that does not use one does not pay for it.
var addons = []string{
	"argocdcm",               // argocd-cm and argocd-cmd-params-cm loading
	"imageupdate/controller", // the image updater over an engine's apps
	"appset/controller",      // the ApplicationSet runner
}

// TestEngineNeverImportsAnAddon fails when package engine or the root
// package imports an add-on, directly or through another package. Such an
// import is a cycle (the add-on imports the engine), which go list reports
// on the importing package.
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
		for _, a := range addons {
			if p := root + "/" + a; pkg == p || strings.HasPrefix(pkg, p+"/") {
				t.Errorf("%s imports the add-on %s; add-ons sit above the engine", top, pkg)
			}
		}
	}
}
