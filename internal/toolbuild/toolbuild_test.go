package toolbuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// A module with no dependencies can still build a program of the standard
// distribution, which keeps this test free of downloads.
func testModule() Module {
	return Module{Name: "toolbuild-test", GoMod: []byte("module example.com/toolbuildtest\n\ngo 1.26\n"), ToolsGo: []byte("package tools\n")}
}

func TestEnsureBuildsOnceAndCaches(t *testing.T) {
	ctx := context.Background() // a build has no deadline in a test: its time is the machine's
	opts := Options{CacheDir: t.TempDir()}
	prog := Program{Name: "gofmt-copy", Package: "cmd/gofmt"}
	var afterCalls atomic.Int32
	need := func(binDir string) bool { _, err := os.Stat(filepath.Join(binDir, "companion")); return err != nil }
	after := func(ctx context.Context, src, binDir string) error {
		afterCalls.Add(1)
		if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
			t.Errorf("after hook: no module source: %v", err)
		}
		return os.WriteFile(filepath.Join(binDir, "companion"), []byte("x"), 0o644)
	}
	var wg sync.WaitGroup
	paths := make([]map[string]string, 3)
	errs := make([]error, 3)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = testModule().Ensure(ctx, []Program{prog}, opts, need, after)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
		if !IsExecutable(paths[i]["gofmt-copy"]) {
			t.Fatalf("caller %d: %q is not an executable", i, paths[i]["gofmt-copy"])
		}
	}
	if n := afterCalls.Load(); n != 1 {
		t.Fatalf("after hook ran %d times for 3 concurrent callers, want 1", n)
	}
	st1, _ := os.Stat(paths[0]["gofmt-copy"])
	if _, err := testModule().Ensure(ctx, []Program{prog}, opts, need, after); err != nil {
		t.Fatal(err)
	}
	st2, _ := os.Stat(paths[0]["gofmt-copy"])
	if !st1.ModTime().Equal(st2.ModTime()) || afterCalls.Load() != 1 {
		t.Fatal("a cached program was built again")
	}
}

func TestCacheDirFollowsModuleContent(t *testing.T) {
	a, err := testModule().CacheDir(Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := testModule()
	m.GoSum = []byte("changed")
	b, _ := m.CacheDir(Options{})
	if a == b {
		t.Fatal("changing the module kept the cache folder")
	}
	if c, _ := testModule().CacheDir(Options{}); c != a {
		t.Fatal("cache folder not stable")
	}
}

func TestBuildErrorNamesPackage(t *testing.T) {
	ctx := context.Background()
	_, err := testModule().Ensure(ctx, []Program{{Name: "nope", Package: "example.com/does/not/exist"}}, Options{CacheDir: t.TempDir()}, nil, nil)
	if err == nil {
		t.Fatal("building a missing package succeeded")
	}
	if want := "example.com/does/not/exist"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not name %s", err, want)
	}
}

// Several programs are built by one go build and installed under their own
// names; two whose default binary names collide (both "gofmt") still both
// arrive.
func TestEnsureBuildsSeveralPrograms(t *testing.T) {
	ctx := context.Background() // a build has no deadline in a test: its time is the machine's
	progs := []Program{
		{Name: "fmt-a", Package: "cmd/gofmt"},
		{Name: "vet-b", Package: "cmd/vet"},
		{Name: "fmt-c", Package: "cmd/gofmt"},
	}
	paths, err := testModule().Ensure(ctx, progs, Options{CacheDir: t.TempDir()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if !IsExecutable(paths[p.Name]) {
			t.Errorf("%s: %q is not an executable", p.Name, paths[p.Name])
		}
	}
}

func TestExecNameFollowsGoBuild(t *testing.T) {
	for path, want := range map[string]string{
		"go.etcd.io/etcd/server/v3":            "server",
		"k8s.io/kubernetes/cmd/kube-apiserver": "kube-apiserver",
		"example.com/cmd/v1":                   "v1",
		"example.com/cmd/v02":                  "v02",
		"example.com/cmd/v10":                  "cmd",
		"v2":                                   "v2",
		"cmd/gofmt":                            "gofmt",
	} {
		if got := execName(path); got != want {
			t.Errorf("execName(%q) = %q, want %q", path, got, want)
		}
	}
}
