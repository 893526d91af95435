package layers

import (
	"os/exec"
	"strings"
	"testing"
)

// root is the front door, and core the engine's package (the lean core).
const (
	root = "github.com/kubegitops/gitops"
	core = root + "/engine"
)

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
			if dep == root || dep == core {
				t.Errorf("%s imports the engine (%s); it must stay below it", fields[0], dep)
			}
		}
	}
}

// deps lists the packages pkg imports, directly or not.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-test=false", "-f", "{{range .Deps}}{{.}}\n{{end}}", pkg)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v: %s", pkg, err, stderr.String())
	}
	return strings.Fields(string(out))
}

// renderers are the import paths (and path prefixes, with a trailing
// slash) of the Helm, Kustomize and Jsonnet renderers and the libraries
// they render with: the lean core builds without them.
var renderers = []string{
	root + "/render/helm", root + "/render/kustomize", root + "/render/jsonnet", root + "/render/builtin",
	"helm.sh/helm/v3/pkg/engine", "helm.sh/helm/v3/pkg/chartutil", "helm.sh/helm/v3/pkg/action",
	"sigs.k8s.io/kustomize/api/", "github.com/google/go-jsonnet",
}

// TestLeanCoreBuildsWithoutTheRenderers fails when package engine reaches
// a Helm, Kustomize or Jsonnet renderer: those are wired in by the root
// (render/builtin) or by the host, never by the core.
func TestLeanCoreBuildsWithoutTheRenderers(t *testing.T) {
	for _, dep := range deps(t, core) {
		for _, r := range renderers {
			if dep == r || (strings.HasSuffix(r, "/") && strings.HasPrefix(dep, r)) || strings.HasPrefix(dep, r+"/") {
				t.Errorf("%s imports %s; the lean core must not reach the renderers", core, dep)
			}
		}
	}
}
