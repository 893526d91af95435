package jsonnet

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func fixture(t testing.TB) *rendertest.Snapshot {
	t.Helper()
	files, err := rendertest.LoadDir("testdata/repo", "")
	if err != nil {
		t.Fatal(err)
	}
	return rendertest.NewSnapshot(files)
}

func guestbook(fsys *rendertest.Snapshot) render.Input {
	return render.Input{FS: fsys, Path: "apps/guestbook", Jsonnet: &render.JsonnetSource{
		ExtVars: []render.JsonnetVar{{Name: "env", Value: "prod"}},
		TLAs:    []render.JsonnetVar{{Name: "name", Value: "guestbook"}, {Name: "replicas", Value: "3", Code: true}},
		Libs:    []string{"vendor/k"},
	}}
}

func TestRenderGoldenWithTLAs(t *testing.T) {
	objs, err := New(DefaultOptions()).Render(context.Background(), guestbook(fixture(t)))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, o := range objs {
		data, _ := yaml.Marshal(o.Object)
		b.WriteString("---\n")
		b.Write(data)
	}
	p := filepath.Join("testdata", "golden", "guestbook.yaml")
	if *update {
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(b.String()), 0o644)
	}
	want, err := os.ReadFile(p)
	if err != nil || string(want) != b.String() {
		t.Fatalf("output differs from %s (%v):\n%s", p, err, b.String())
	}
	if len(objs) != 3 {
		t.Fatalf("got %d objects, want 3 (array flattened, List flattened)", len(objs))
	}
	if n, _, _ := unstructured.NestedInt64(objs[0].Object, "spec", "replicas"); n != 3 {
		t.Errorf("replicas = %d, want 3 from the TLA code", n)
	}
	if objs[1].GetLabels()["env"] != "prod" {
		t.Error("ext var not applied")
	}
}

func TestS1S3JsonnetImportsStayInsideTheRoot(t *testing.T) {
	cases := map[string]error{
		"import '../../../../etc/passwd'": render.ErrOutsideRoot,
		"import '/etc/passwd'":            render.ErrAbsolutePath,
		"importstr 'https://evil/x'":      render.ErrSchemeNotAllowed,
		"importstr 'link.txt'":            render.ErrAbsolutePath,
		"importstr 'chain.txt'":           render.ErrOutsideRoot,
	}
	for code, want := range cases {
		snap := fixture(t)
		snap.MapFS["apps/evil/main.jsonnet"] = &fstest.MapFile{Data: []byte("{apiVersion:'v1',kind:'ConfigMap',metadata:{name:'x'},data:{x:" + code + "}}")}
		snap.MapFS["apps/evil/link.txt"] = &fstest.MapFile{Data: []byte("/etc/passwd"), Mode: os.ModeSymlink}
		snap.MapFS["apps/evil/chain.txt"] = &fstest.MapFile{Data: []byte("../../../repo/apps/guestbook/notes.txt"), Mode: os.ModeSymlink}
		_, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "apps/evil"})
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", code, err, want)
		}
	}
	// Library paths are rooted too.
	in := guestbook(fixture(t))
	in.Jsonnet.Libs = []string{"../../outside"}
	if _, err := New(DefaultOptions()).Render(context.Background(), in); !errors.Is(err, render.ErrOutsideRoot) {
		t.Errorf("library path out of the tree: %v, want ErrOutsideRoot", err)
	}
}

func TestS18JsonnetOptionsMissTheCache(t *testing.T) {
	base := DefaultOptions()
	muts, skipped := rendertest.Mutations(base)
	if len(skipped) != 0 {
		t.Fatalf("fields the walker cannot change: %v", skipped)
	}
	in := guestbook(fixture(t))
	baseKey := rendertest.IdentityKey(t, New(base), in)
	for _, m := range muts {
		if rendertest.IdentityKey(t, New(m.Value.(Options)), in) == baseKey {
			t.Errorf("changing Options.%s does not change the cache key", m.Field)
		}
	}
}
