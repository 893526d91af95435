package preview

import "testing"

// A file no render reads (a note beside the shared base, a new folder
// outside every app) renders nothing again; a new file in a plain app's
// folder renders that app again, because its folder is its input.
func TestUnreadFilesRenderNothingAgain(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	head := r.commit(t, map[string]string{
		"base/NOTES.md":     "about the base\n",
		"docs/readme.md":    "docs\n",
		"plain/p7/cm2.yaml": configMap("p7b", "v1"),
	})
	rep := runPreview(t, r.options(t, r.first, head))
	if got := names(rep); len(got) != 1 || got[0] != "p7" {
		t.Fatalf("apps %v, want [p7]", got)
	}
	if rep.Renders.Head != 1 {
		t.Fatalf("head renders %d, want 1 (p7)", rep.Renders.Head)
	}
}
