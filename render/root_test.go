package render

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// repoWithLinks builds, on disk, outside/secret.txt next to repo/ and a set
// of symbolic links inside repo/ (os.DirFS exposes links via fs.ReadLinkFS).
func repoWithLinks(t *testing.T) (fs.FS, string) {
	t.Helper()
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(repo, "app", "sub"), 0o755))
	must(os.MkdirAll(filepath.Join(top, "outside"), 0o755))
	must(os.WriteFile(filepath.Join(top, "outside", "secret.txt"), []byte("TOPSECRET"), 0o644))
	must(os.WriteFile(filepath.Join(repo, "app", "values.yaml"), []byte("a: 1\n"), 0o644))
	links := map[string]string{
		"app/to-root":      "/",
		"app/to-etc":       "/etc/passwd",
		"app/to-parent":    "../..",
		"app/to-outside":   "../../outside/secret.txt",
		"app/abs-into":     filepath.Join(repo, "app", "values.yaml"),
		"app/reenter":      "../../repo/app/values.yaml", // leaves, then comes back
		"app/chain1":       "chain2",
		"app/chain2":       "sub/../../app/../../outside/secret.txt",
		"app/good":         "values.yaml",
		"app/sub/good-up":  "../values.yaml",
		"app/loop1":        "loop2",
		"app/loop2":        "loop1",
		"app/dir-escape":   "../..",
		"app/sub/via-link": "../to-outside",
	}
	for name, target := range links {
		must(os.Symlink(target, filepath.Join(repo, filepath.FromSlash(name))))
	}
	return os.DirFS(repo), top
}

func TestS3SymlinkEscapesAreRefused(t *testing.T) {
	fsys, _ := repoWithLinks(t)
	root := NewRoot(fsys, Limits{})
	cases := map[string]error{
		"app/to-root":               ErrAbsolutePath,
		"app/to-root/etc/passwd":    ErrAbsolutePath,
		"app/to-etc":                ErrAbsolutePath,
		"app/to-parent/outside":     ErrOutsideRoot,
		"app/to-outside":            ErrOutsideRoot,
		"app/abs-into":              ErrAbsolutePath,
		"app/reenter":               ErrOutsideRoot,
		"app/chain1":                ErrOutsideRoot,
		"app/loop1":                 ErrSymlinkLoop,
		"app/dir-escape/outside":    ErrOutsideRoot,
		"app/sub/via-link":          ErrOutsideRoot,
		"../outside/secret.txt":     ErrOutsideRoot,
		"app/../../outside/secret":  ErrOutsideRoot,
		"/etc/passwd":               ErrAbsolutePath,
		`C:\Windows\system.ini`:     ErrAbsolutePath,
		"app/sub/../../../outside":  ErrOutsideRoot,
		"app/missing/../../../etc":  ErrOutsideRoot,
		"app/to-parent/repo/app/ok": ErrOutsideRoot,
	}
	for name, want := range cases {
		data, err := root.ReadFile(name)
		if !errors.Is(err, want) {
			t.Errorf("ReadFile(%q) error = %v, want %v", name, err, want)
		}
		if strings.Contains(string(data), "TOPSECRET") || (err != nil && strings.Contains(err.Error(), "TOPSECRET")) {
			t.Errorf("ReadFile(%q) leaked the secret", name)
		}
		var pe *PathError
		if !errors.As(err, &pe) || pe.Path != name {
			t.Errorf("ReadFile(%q) error %v is not a *PathError naming the path", name, err)
		}
		if _, err := root.Stat(name); !errors.Is(err, want) {
			t.Errorf("Stat(%q) error = %v, want %v", name, err, want)
		}
	}
}

func TestS3SymlinksInsideTheRootWork(t *testing.T) {
	fsys, _ := repoWithLinks(t)
	root := NewRoot(fsys, Limits{})
	for _, name := range []string{"app/good", "app/sub/good-up", "app/sub/../values.yaml"} {
		data, err := root.ReadFile(name)
		if err != nil || string(data) != "a: 1\n" {
			t.Errorf("ReadFile(%q) = %q, %v", name, data, err)
		}
	}
	if p, err := root.Resolve("app/sub/good-up"); err != nil || p != "app/values.yaml" {
		t.Errorf("Resolve = %q, %v; want app/values.yaml", p, err)
	}
}

func TestS1SubRefusesSchemesAbsoluteAndTraversal(t *testing.T) {
	root := NewRoot(fstest.MapFS{"app/values.yaml": {Data: []byte("a: 1")}}, Limits{})
	cases := map[string]error{
		"../../../../etc/passwd": ErrOutsideRoot,
		"/etc/passwd":            ErrAbsolutePath,
		"file:///etc/passwd":     ErrSchemeNotAllowed,
		"https://evil/x.yaml":    ErrSchemeNotAllowed,
		"s3://bucket/values":     ErrSchemeNotAllowed,
		"secrets://../../x":      ErrSchemeNotAllowed,
		"$values/../../../x":     ErrOutsideRoot,
		"values.yaml?../../../x": nil, // a literal file name; it does not exist
	}
	for rel, want := range cases {
		_, err := root.Sub("app", rel)
		if want == nil {
			if err != nil {
				t.Errorf("Sub(%q) = %v, want a plain (missing) path", rel, err)
			}
			continue
		}
		if !errors.Is(err, want) {
			t.Errorf("Sub(%q) error = %v, want %v", rel, err, want)
		}
	}
}

func TestRootByteAndFileBudgets(t *testing.T) {
	files := fstest.MapFS{
		"big":   {Data: make([]byte, 2000)},
		"small": {Data: make([]byte, 600)},
	}
	root := NewRoot(files, Limits{MaxFileBytes: 1000, MaxTotalBytes: 1000, MaxFiles: 3})
	if _, err := root.ReadFile("big"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("big file: %v, want ErrTooLarge", err)
	}
	if _, err := root.ReadFile("small"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.ReadFile("small"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("second read past the total budget: %v, want ErrTooLarge", err)
	}
	root = NewRoot(fstest.MapFS{"a": {}, "b": {}}, Limits{MaxFiles: 1})
	_, _ = root.ReadFile("a")
	if _, err := root.ReadFile("b"); !errors.Is(err, ErrTooManyFiles) {
		t.Fatalf("second file with MaxFiles 1: %v, want ErrTooManyFiles", err)
	}
}

func TestDetect(t *testing.T) {
	fsys := fstest.MapFS{
		"k/kustomization.yaml": {},
		"k/Chart.yaml":         {},
		"k2/Kustomization":     {},
		"h/Chart.yaml":         {},
		"j/main.jsonnet":       {},
		"p/cm.yaml":            {},
		"p/sub/x.jsonnet":      {},
	}
	want := map[string]Kind{"k": KindKustomize, "k2": KindKustomize, "h": KindHelm, "j": KindJsonnet, "p": KindPlain}
	for dir, kind := range want {
		got, err := Detect(fsys, dir)
		if err != nil || got != kind {
			t.Errorf("Detect(%s) = %s, %v; want %s", dir, got, err, kind)
		}
	}
	if _, err := Detect(fsys, "../x"); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("Detect(../x) = %v, want ErrOutsideRoot", err)
	}
}

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"*.yaml", "a.yaml", true},
		{"*.yaml", "sub/a.yaml", true},
		{"sub/*.yaml", "sub/a.yaml", true},
		{"sub/*.yaml", "other/a.yaml", false},
		{"{a,b}.yaml", "b.yaml", true},
		{"{a,b}.yaml", "c.yaml", false},
		{"{*.yml,x/{c,d}.json}", "x/d.json", true},
		{"[", "[", false},
	}
	for _, c := range cases {
		if got := MatchGlob(c.pattern, c.name); got != c.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}
