package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/health"
)

// copyFS writes fsys into a new temporary folder and returns its path.
func copyFS(t *testing.T, fsys fs.FS) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, fsys); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestHealthTest_ShippedScriptsPass(t *testing.T) {
	dir := copyFS(t, health.BuiltinScripts())
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"health-test", "-v", dir}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "PASS cert-manager.io/Certificate/health.lua testdata/healthy.yaml") {
		t.Errorf("no per-case line in:\n%s", out)
	}
	if !strings.Contains(out, " failed\n") || !strings.HasSuffix(out, ", 0 failed\n") {
		t.Errorf("summary missing or wrong:\n%s", out)
	}
}

func TestHealthTest_FailingCaseExitsOne(t *testing.T) {
	dir := copyFS(t, health.BuiltinScripts())
	// Break one expectation, as an author who changed a script would.
	file := filepath.Join(dir, "argoproj.io", "Workflow", "health_test.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.Replace(data, []byte("status: Healthy"), []byte("status: Degraded"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"health-test", dir}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stdout.String())
	}
	want := `FAIL argoproj.io/Workflow/health.lua testdata/succeeded.yaml: want "Degraded", got "Healthy"`
	if !strings.Contains(stdout.String(), want) {
		t.Fatalf("want %q in:\n%s", want, stdout.String())
	}
	if strings.Contains(stdout.String(), "PASS") {
		t.Fatalf("passing cases printed without -v:\n%s", stdout.String())
	}
}

func TestHealthTest_Usage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"health-test"}, &stdout, &stderr); code != 2 {
		t.Fatalf("no DIR: exit %d, want 2", code)
	}
	if code := run(context.Background(), []string{"health-test", filepath.Join(t.TempDir(), "nope")}, &stdout, &stderr); code != 2 {
		t.Fatalf("missing DIR: exit %d, want 2", code)
	}
	if code := run(context.Background(), []string{"health-test", t.TempDir()}, &stdout, &stderr); code != 1 {
		t.Fatalf("empty DIR: exit %d, want 1", code)
	}
}

// TestHealthTest_NowFixesTheClock checks -now: a script comparing
// timestamps gets the same answer on every run.
func TestHealthTest_NowFixesTheClock(t *testing.T) {
	dir := t.TempDir()
	kindDir := filepath.Join(dir, "example.com", "Lease")
	if err := os.MkdirAll(filepath.Join(kindDir, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"health.lua":          `return {status = "Healthy", message = os.date("!%Y-%m-%d", os.time())}`,
		"health_test.yaml":    "tests:\n- healthStatus: {status: Healthy, message: \"2030-01-02\"}\n  inputPath: testdata/lease.yaml\n",
		"testdata/lease.yaml": "apiVersion: example.com/v1\nkind: Lease\nmetadata: {name: l}\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(kindDir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"health-test", "-now", "2030-01-02T03:04:05Z", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if code := run(context.Background(), []string{"health-test", "-now", "yesterday", dir}, &stdout, &stderr); code != 2 {
		t.Fatalf("bad -now: exit %d, want 2", code)
	}
}
