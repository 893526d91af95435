package toolbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// writeProgram writes a module whose program prints msg.
func writeProgram(t *testing.T, dir, msg string) {
	t.Helper()
	files := map[string]string{
		"go.mod":            "module example.com/installtest\n\ngo 1.26\n",
		"cmd/hello/main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"" + msg + "\") }\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A local program is installed once for callers at the same time, left
// as it is (the same file) while its source is unchanged, and installed
// again when its source changes.
func TestLocalInstallsOnceAndAgainOnlyWhenChanged(t *testing.T) {
	ctx := context.Background() // a build has no deadline in a test: its time is the machine's
	src, opts := t.TempDir(), Options{CacheDir: t.TempDir()}
	writeProgram(t, src, "first")
	l := Local{Dir: src, Package: "./cmd/hello"}
	var wg sync.WaitGroup
	paths, errs := make([]string, 3), make([]error, 3)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = l.Install(ctx, opts)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || paths[i] != filepath.Join(opts.CacheDir, "hello") {
			t.Fatalf("caller %d: %q, %v", i, paths[i], err)
		}
	}
	run := func() string {
		out, err := exec.Command(paths[0]).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	before, _ := os.Stat(paths[0])
	if _, err := l.Install(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(paths[0]); !os.SameFile(before, after) || run() != "first" {
		t.Fatal("an unchanged program was installed again")
	}
	writeProgram(t, src, "second")
	if _, err := l.Install(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if got := run(); got != "second" {
		t.Fatalf("after a change of its source the program prints %q, want second", got)
	}
}

// A program that does not build is an error naming it and the compiler's
// words.
func TestLocalInstallErrorNamesThePackage(t *testing.T) {
	src := t.TempDir()
	writeProgram(t, src, `broken" + `)
	_, err := Local{Dir: src, Package: "./cmd/hello"}.Install(context.Background(), Options{CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "./cmd/hello") || !strings.Contains(err.Error(), "main.go") {
		t.Fatalf("install of a broken program: %v", err)
	}
}
