package render

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// TestErrorNamesTheTool: an error wrapped without a tool (the tool was
// to be detected) names the detected one, and says so when the path
// cannot be read to detect any, instead of a blank ("render  app").
func TestErrorNamesTheTool(t *testing.T) {
	fsys := fstest.MapFS{"app/kustomization.yaml": {Data: []byte("resources: []\n")}}
	cause := errors.New("boom")
	got := Wrap("", Input{FS: fsys, Path: "app", AppName: "shop"}, cause).Error()
	if want := `render kustomize app "shop" at app: boom`; got != want {
		t.Errorf("detected tool: got %q, want %q", got, want)
	}
	got = Wrap("", Input{FS: fsys, Path: "gone", AppName: "shop"}, cause).Error()
	if want := `render (tool not detected) app "shop" at gone: boom`; got != want {
		t.Errorf("no tool: got %q, want %q", got, want)
	}
	if got := Wrap(KindHelm, Input{FS: fsys, Path: "app"}, cause).Error(); got != "render helm at app: boom" {
		t.Errorf("given tool: got %q", got)
	}
	for _, s := range []string{"render  app", "render  at"} {
		if strings.Contains(got, s) {
			t.Errorf("blank tool in %q", got)
		}
	}
}
