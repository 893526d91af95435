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
// the vocabulary, the model, the stores and the machinery it is made of,
// and the batteries that implement its seams (renderers, the chart
// source, CEL policies, the Redis store, kubeconfig loading, shards),
// which import nothing of the engine either. shard is one of them: it
// implements the engine's Sharder seam with Leases and imports nothing of
// the engine, so it sits below it, and the host plugs it in
// (Options.Sharder); the lean core never imports it (batteries).
var below = []string{
	"resource", "apis", "appstatus", "state", "autosync", "source", "render", "cache",
	"diff", "health", "hooks", "sync", "project", "rbac", "shard",
	"internal/clustersecret", "internal/helmindex", "internal/strictload", "internal/wildcard",
}

// engineLayer is the engine: package engine and its internal parts.
var engineLayer = []string{"engine"}

// addons are the packages (each with its subpackages) above the engine:
// they use only its exported API (or none of it), and neither the engine
// nor a package below it imports one, so that a host pays only for the
// add-ons it uses.
var addons = []string{
	"argocdcm",    // argocd-cm and argocd-cmd-params-cm loading
	"appset",      // ApplicationSet generators, and the runner over an engine (appset/controller)
	"imageupdate", // the image updater, and its loop over an engine (imageupdate/controller)
	"hydrator",    // the source hydrator: dry sources rendered and committed to Git
	"notify",      // argocd-notifications-cm triggers, templates, services, delivery
	"preview",     // what a Git change does to every app
}

// hosts are the programs built on the library (examples/...): nothing
// else imports them.
var hosts = []string{"examples"}

// support are the test helpers and build tools: a real local cluster
// (testenv), servers and fixtures for tests, the reference tools' builds,
// the alias generator, these guards. No package of the library (below,
// engine, root, add-ons) imports one.
var support = []string{
	"testenv",
	"internal/aliasgen", "internal/apicheck", "internal/apidocs", "internal/argodocs", "internal/benchdata", "internal/chartserver", "internal/cloudfake", "internal/faults", "internal/filegraph", "internal/forgetest",
	"internal/gitserver", "internal/godeps", "internal/layers", "internal/lfsserver", "internal/redistest", "internal/reftools",
	"internal/sopsexe", "internal/testfiles", "internal/testtools", "internal/toolbuild",
}

// Layer names, in the order imports may point: a package imports only
// packages of its own layer or of a lower one (support and hosts aside).
const (
	layerBelow   = "below the engine"
	layerEngine  = "the engine"
	layerRoot    = "the root"
	layerAddon   = "an add-on"
	layerHost    = "a host"
	layerSupport = "test support"
)

var rank = map[string]int{layerBelow: 0, layerEngine: 1, layerRoot: 2, layerAddon: 3}

// under reports whether pkg is one of dirs (module-relative) or below one.
func under(pkg string, dirs []string) bool {
	for _, d := range dirs {
		if p := root + "/" + d; pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

// layerOf returns the layer of a package of the module; "" when none
// lists it.
func layerOf(pkg string) string {
	switch {
	case pkg == root:
		return layerRoot
	case under(pkg, engineLayer):
		return layerEngine
	case under(pkg, below):
		return layerBelow
	case under(pkg, addons):
		return layerAddon
	case under(pkg, hosts):
		return layerHost
	case under(pkg, support):
		return layerSupport
	}
	return ""
}

// TestEveryPackageHasALayer fails when a package of the module is in no
// layer (a new top-level package must be placed in one of the lists
// above), or when an import points the wrong way: up from below the engine
// to the engine, the root or an add-on; from the engine to the root or an
// add-on; from the root to an add-on; from the library to a host or to test
// support; from anything outside examples/ to a host.
func TestEveryPackageHasALayer(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-test=false", "-f",
		"{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{with .Error}} ERROR: {{.Err}}{{end}}", root+"/...")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 50 {
		t.Fatalf("go list listed %d packages of the module, want them all", len(lines))
	}
	for _, line := range lines {
		line, loadErr, _ := strings.Cut(line, " ERROR: ")
		fields := strings.Fields(line)
		pkg, from := fields[0], layerOf(fields[0])
		if loadErr != "" {
			t.Errorf("%s: %s (an import that points up is a cycle)", pkg, loadErr)
		}
		if from == "" {
			t.Errorf("%s is in no layer: list it in internal/layers (below the engine, an add-on, a host or test support)", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if imp != root && !strings.HasPrefix(imp, root+"/") {
				continue
			}
			if why := wrongWay(from, layerOf(imp)); why != "" {
				t.Errorf("%s (%s) imports %s (%s): %s", pkg, from, imp, layerOf(imp), why)
			}
		}
	}
}

// wrongWay says why an import from a package of layer from to one of
// layer to points the wrong way; "" when it may.
func wrongWay(from, to string) string {
	switch {
	case to == layerHost && from != layerHost:
		return "no package imports examples/"
	case to == layerSupport && from != layerSupport && from != layerHost:
		return "the library never imports test support"
	case from == layerSupport || from == layerHost:
		return ""
	case rank[to] > rank[from]:
		return "imports point down: below the engine, the engine, the root, the add-ons"
	}
	return ""
}

// TestBelowTheEngineNeverImportsIt fails when a package below the engine
// imports the engine, the root package or an add-on, directly or through
// another package: a host reading a status, keeping state or rendering
// must not pay for the engine, nor the engine for an add-on through one
// of its parts (state imported the image updater's registry client this
// way).
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
			switch {
			case dep == root || under(dep, engineLayer):
				t.Errorf("%s imports the engine (%s); it must stay below it", fields[0], dep)
			case under(dep, addons):
				t.Errorf("%s imports the add-on %s; add-ons sit above the engine", fields[0], dep)
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
