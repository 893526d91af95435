package plain

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
	"github.com/kubegitops/gitops/resource"
)

func fixture(t testing.TB) *rendertest.Snapshot {
	t.Helper()
	files, err := rendertest.LoadDir("testdata/app", "app")
	if err != nil {
		t.Fatal(err)
	}
	return rendertest.NewSnapshot(files)
}

func names(objs []*unstructured.Unstructured) string {
	var n []string
	for _, o := range objs {
		n = append(n, o.GetKind()+"/"+o.GetName())
	}
	return strings.Join(n, " ")
}

func TestRenderGolden(t *testing.T) {
	cases := []struct {
		name string
		dir  *render.DirectorySource
		want string
	}{
		{"flat", nil, "Namespace/demo ConfigMap/one ConfigMap/from-list-a ConfigMap/from-list-b Service/web"},
		{"recurse", &render.DirectorySource{Recurse: true}, "Namespace/demo ConfigMap/one ConfigMap/from-list-a ConfigMap/from-list-b Service/web ConfigMap/excluded ConfigMap/in-sub ConfigMap/in-deeper"},
		{"recurse-exclude", &render.DirectorySource{Recurse: true, Exclude: "{excluded/*,sub/deeper/*}"}, "Namespace/demo ConfigMap/one ConfigMap/from-list-a ConfigMap/from-list-b Service/web ConfigMap/in-sub"},
		{"include", &render.DirectorySource{Recurse: true, Include: "*.json"}, "Service/web"},
	}
	for _, c := range cases {
		objs, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: fixture(t), Path: "app", Directory: c.dir})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := names(objs); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestNotAManifestFailsNamingTheFile(t *testing.T) {
	snap := fixture(t)
	snap.MapFS["app/values.yaml"] = &fstest.MapFile{Data: []byte("replicas: 3\n")}
	_, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "app"})
	var de *resource.DecodeError
	if !errors.As(err, &de) || de.File != "app/values.yaml" {
		t.Fatalf("err = %v, want a DecodeError naming app/values.yaml", err)
	}
}

// onDisk writes files under a temp dir and returns os.DirFS of it.
func onDisk(t *testing.T, files map[string]string, links map[string]string) (fs.FS, string) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(dir, filepath.FromSlash(name))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return os.DirFS(dir), dir
}

const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"

// TestS3DirectoryAppSymlinks: links to /, /etc, .., a chain that leaves and
// re-enters, and an absolute link into the repo all fail (CVE-2022-24904).
func TestS3DirectoryAppSymlinks(t *testing.T) {
	for name, target := range map[string]string{
		"root.yaml":     "/",
		"etc":           "/etc",
		"parent":        "../..",
		"up.json":       "../../outside.json",
		"reenter.yaml":  "../app/../../repo/app/real.yaml",
		"absinto.yaml":  "ABS",
		"dirchain/link": "../../..",
	} {
		files := map[string]string{"repo/app/real.yaml": cm, "outside.json": `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`}
		fsys, dir := onDisk(t, files, nil)
		if target == "ABS" {
			target = filepath.Join(dir, "repo", "app", "real.yaml")
		}
		p := filepath.Join(dir, "repo", "app", filepath.FromSlash(name))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		_ = fsys
		repo := os.DirFS(filepath.Join(dir, "repo"))
		objs, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: repo, Path: "app", Directory: &render.DirectorySource{Recurse: true}})
		if !errors.Is(err, render.ErrOutsideRoot) && !errors.Is(err, render.ErrAbsolutePath) {
			t.Errorf("link %s -> %s: %d objects, err %v; want a typed refusal", name, target, len(objs), err)
		}
	}
}

// TestS5OversizedAndTooManyFiles: a manifest past the file budget and a
// directory of many tiny files fail with typed errors.
// TestDirectoryLinkCyclesAreWalkedOnce: a link to an ancestor inside the
// tree is allowed but walked once, not until the link budget runs out.
func TestDirectoryLinkCyclesAreWalkedOnce(t *testing.T) {
	fsys, _ := onDisk(t, map[string]string{"app/cm.yaml": cm}, map[string]string{"app/self": "."})
	objs, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: fsys, Path: "app", Directory: &render.DirectorySource{Recurse: true}})
	if err != nil || len(objs) != 1 {
		t.Fatalf("%d objects, %v; want 1 object", len(objs), err)
	}
}

func TestS5OversizedAndTooManyFiles(t *testing.T) {
	big := rendertest.NewSnapshot(fstest.MapFS{"app/big.yaml": {Data: []byte(cm + "data:\n  x: \"" + strings.Repeat("a", 2<<20) + "\"\n")}})
	_, err := New(Options{Limits: render.Limits{MaxFileBytes: 1 << 20}}).Render(context.Background(), render.Input{FS: big, Path: "app"})
	if !errors.Is(err, render.ErrTooLarge) {
		t.Errorf("oversized manifest: %v, want ErrTooLarge", err)
	}
	files := fstest.MapFS{}
	for i := 0; i < 300; i++ {
		files["app/f"+strings.Repeat("x", i)+".yaml"] = &fstest.MapFile{Data: []byte(cm)}
	}
	_, err = New(Options{Limits: render.Limits{MaxFiles: 100}}).Render(context.Background(), render.Input{FS: rendertest.NewSnapshot(files), Path: "app"})
	if !errors.Is(err, render.ErrTooManyFiles) {
		t.Errorf("many tiny files: %v, want ErrTooManyFiles", err)
	}
	// The total budget holds across files too.
	_, err = New(Options{Limits: render.Limits{MaxTotalBytes: 1000}}).Render(context.Background(), render.Input{FS: rendertest.NewSnapshot(files), Path: "app"})
	if !errors.Is(err, render.ErrTooLarge) {
		t.Errorf("total budget: %v, want ErrTooLarge", err)
	}
}

// TestS5UnreadableFileAndDirectory: a 0000-mode file and a directory
// without x fail with a typed error naming them. Root bypasses file modes,
// so as root the same tree must render; either way the outcome is asserted.
func TestS5UnreadableFileAndDirectory(t *testing.T) {
	fsys, dir := onDisk(t, map[string]string{"app/ok.yaml": cm, "app/locked.yaml": cm, "app/noexec/cm.yaml": cm}, nil)
	_ = os.Chmod(filepath.Join(dir, "app", "locked.yaml"), 0)
	_ = os.Chmod(filepath.Join(dir, "app", "noexec"), 0o600)
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "app", "noexec"), 0o755) })
	_, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: fsys, Path: "app", Directory: &render.DirectorySource{Recurse: true}})
	if os.Geteuid() == 0 {
		if err != nil {
			t.Fatalf("as root, modes do not apply; render failed: %v", err)
		}
		return
	}
	var pe *render.PathError
	if !errors.Is(err, fs.ErrPermission) || !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a PathError wrapping fs.ErrPermission", err)
	}
}

// TestS6AliasBomb: a ~400-byte billion-laughs document is refused by the
// alias expansion limit of resource.Decode.
func TestS6AliasBomb(t *testing.T) {
	bomb := `apiVersion: v1
kind: ConfigMap
metadata:
  name: lol
data:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
`
	snap := rendertest.NewSnapshot(fstest.MapFS{"app/bomb.yaml": {Data: []byte(bomb)}})
	_, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "app"})
	if !errors.Is(err, resource.ErrAliasExpansion) {
		t.Fatalf("err = %v, want ErrAliasExpansion", err)
	}
}

func TestS18PlainOptionsMissTheCache(t *testing.T) {
	base := DefaultOptions()
	muts, skipped := rendertest.Mutations(base)
	if len(skipped) != 0 {
		t.Fatalf("fields the walker cannot change: %v", skipped)
	}
	in := render.Input{FS: fixture(t), Path: "app"}
	baseKey := rendertest.IdentityKey(t, New(base), in)
	for _, m := range muts {
		if rendertest.IdentityKey(t, New(m.Value.(Options)), in) == baseKey {
			t.Errorf("changing Options.%s does not change the cache key", m.Field)
		}
	}
}
