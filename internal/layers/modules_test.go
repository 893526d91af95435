package layers

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sideModules are the repository's other Go modules that build the
// library's packages again in their own build list (bench/ and sops/
// replace github.com/kubegitops/gitops by the repository).
var sideModules = []string{"bench", "sops"}

// TestSideModulesShareTheLibrarysVersions fails when bench/ or sops/ selects
// another version of a module whose packages the library also compiles. A
// package compiled against another version of a dependency is a new build
// action, so one differing module low in the Kubernetes stack (k8s.io/utils,
// json-iterator) made each of those modules compile the whole stack a second
// time on a cold build cache. Fix it by requiring the side module's version in
// the library's go.mod (go get module@version; go mod tidy in each module).
func TestSideModulesShareTheLibrarysVersions(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	libVersions := moduleVersions(t, repo)
	libModules := compiledModules(t, repo, "./...")
	for _, side := range sideModules {
		dir := filepath.Join(repo, side)
		sideVersions := moduleVersions(t, dir)
		for mod := range compiledModules(t, dir, "./...") {
			if !libModules[mod] {
				continue
			}
			if lib, sv := libVersions[mod], sideVersions[mod]; lib != sv {
				t.Errorf("%s/ selects %s %s, the library %s: both compile its packages, so a cold build compiles them twice", side, mod, sv, lib)
			}
		}
	}
}

// moduleVersions returns the version of every module in dir's build list.
func moduleVersions(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := goIn(t, dir, "list", "-m", "-f", "{{.Path}} {{.Version}}", "all")
	versions := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		path, version, _ := strings.Cut(line, " ")
		versions[path] = version
	}
	return versions
}

// compiledModules returns the modules whose packages dir's packages (with
// their tests) compile, the standard library and the main module left out.
func compiledModules(t *testing.T, dir string, pattern string) map[string]bool {
	t.Helper()
	out := goIn(t, dir, "list", "-deps", "-test", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", pattern)
	mods := map[string]bool{}
	for _, m := range strings.Fields(out) {
		mods[m] = true
	}
	return mods
}

func goIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s in %s: %v: %s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return string(out)
}
