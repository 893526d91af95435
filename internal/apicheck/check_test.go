package apicheck

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/toolbuild"
)

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// apidiffForTest finds apidiff (make tools builds it first) or builds it,
// with no deadline, saying so.
func apidiffForTest(t *testing.T) {
	t.Helper()
	log := func(format string, args ...any) {
		t.Logf("apicheck: %s (make tools builds it before the tests)", fmt.Sprintf(format, args...))
	}
	if _, err := Apidiff(context.Background(), toolbuild.Options{Log: log}); err != nil {
		t.Fatalf("%v\n(run `make tools` to build apidiff before the tests)", err)
	}
}

// TestCheckFailsForARemovedNameUntilTheChangelogListsIt runs the check as
// make apicheck does, with the real apidiff and git, on a small module:
// released, then changed. A removed function, a removed field and a
// removed name of a subpackage fail it, by name; a removal in internal/ or
// examples/ does not; listing the three in the Unreleased section (not in
// the release's own section) makes it pass.
func TestCheckFailsForARemovedNameUntilTheChangelogListsIt(t *testing.T) {
	apidiffForTest(t)
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, dir, "go.mod", "module example.com/lib\n\ngo 1.26\n")
	writeFile(t, dir, "lib.go", "// Package lib is a library.\npackage lib\n\n// A is kept.\nfunc A() {}\n\n// B goes.\nfunc B() {}\n\n// T loses a field.\ntype T struct{ E, F int }\n")
	writeFile(t, dir, "sub/sub.go", "// Package sub is below.\npackage sub\n\n// C goes.\nfunc C() {}\n")
	writeFile(t, dir, "internal/x/x.go", "// Package x is internal.\npackage x\n\n// X goes.\nfunc X() {}\n")
	writeFile(t, dir, "examples/demo/demo.go", "// Package demo is an example.\npackage demo\n\n// D goes.\nfunc D() {}\n")
	changelog := "# Changelog\n\n## Unreleased\n\n## v0.1.0\n\n- `lib.B` and `sub.C` were added.\n"
	writeFile(t, dir, "CHANGELOG.md", changelog)
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "v0.1.0")
	writeFile(t, dir, ReleaseFile, "v0.1.0 "+git(t, dir, "rev-parse", "HEAD")+"\n")

	opts := DefaultOptions()
	opts.Dir, opts.GoFlags, opts.ExportDir = dir, "", t.TempDir()
	res, err := Check(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Breaking)+len(res.Listed) != 0 {
		t.Fatalf("the released tree itself: breaking %v, listed %v", res.Breaking, res.Listed)
	}

	writeFile(t, dir, "lib.go", "// Package lib is a library.\npackage lib\n\n// A is kept.\nfunc A() {}\n\n// T lost a field.\ntype T struct{ E int }\n\n// N is new.\nfunc N() {}\n")
	writeFile(t, dir, "sub/sub.go", "// Package sub is below.\npackage sub\n")
	writeFile(t, dir, "internal/x/x.go", "// Package x is internal.\npackage x\n")
	writeFile(t, dir, "examples/demo/demo.go", "// Package demo is an example.\npackage demo\n")
	res, err = Check(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(res.Breaking), []string{"lib.B", "lib.T.F", "sub.C"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("breaking = %q, want %q (listed %v)", got, want, res.Listed)
	}
	if !strings.Contains(res.Breaking[0].Message, "removed") {
		t.Errorf("apidiff's message %q does not say removed", res.Breaking[0].Message)
	}

	changelog = strings.Replace(changelog, "## Unreleased\n", "## Unreleased\n\n- `lib.B` removed: use `lib.A`.\n- `lib.T.F` removed, and `sub.C`.\n", 1)
	writeFile(t, dir, "CHANGELOG.md", changelog)
	res, err = Check(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Breaking) != 0 || !reflect.DeepEqual(names(res.Listed), []string{"lib.B", "lib.T.F", "sub.C"}) {
		t.Fatalf("with the CHANGELOG lines: breaking %v, listed %v", res.Breaking, res.Listed)
	}
}

func names(changes []Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Name)
	}
	return out
}
