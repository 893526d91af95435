package plain

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/rendertest"
)

// With directory.disableExtensionFilter, files of any extension that the
// include and exclude globs let through are manifests ("*.yaml.sealed");
// .jsonnet files stay the Jsonnet renderer's. Without it, they are not
// read at all.
func TestDisableExtensionFilterReadsCustomExtensions(t *testing.T) {
	cm := func(n string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + n + "\n")}
	}
	snap := rendertest.NewSnapshot(fstest.MapFS{
		"app/a.yaml":        cm("plain"),
		"app/b.yaml.sealed": cm("sealed"),
		"app/c.manifest":    cm("custom"),
		"app/d.jsonnet":     &fstest.MapFile{Data: []byte("{}")},
		"app/.hidden.txt":   &fstest.MapFile{Data: []byte("not read")},
	})
	cases := []struct {
		name string
		dir  *render.DirectorySource
		want string
	}{
		{"default", nil, "ConfigMap/plain"},
		{"include-without-flag", &render.DirectorySource{Include: "*.sealed"}, ""},
		{"include", &render.DirectorySource{DisableExtensionFilter: true, Include: "*.sealed"}, "ConfigMap/sealed"},
		{"exclude", &render.DirectorySource{DisableExtensionFilter: true, Exclude: "*.manifest"}, "ConfigMap/plain ConfigMap/sealed"},
		{"all", &render.DirectorySource{DisableExtensionFilter: true}, "ConfigMap/plain ConfigMap/sealed ConfigMap/custom"},
	}
	for _, c := range cases {
		objs, err := New(DefaultOptions()).Render(context.Background(), render.Input{FS: snap, Path: "app", Directory: c.dir})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := names(objs); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
