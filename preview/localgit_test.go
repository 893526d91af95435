package preview

import (
	"slices"
	"testing"

	gogit "github.com/go-git/go-git/v5"
)

// A preview of a clone on disk (LocalGit), revisions named as a CI
// checkout has them (origin/main, a commit), finds what the Git server
// preview finds.
func TestLocalGitClonePreview(t *testing.T) {
	t.Parallel()
	r := newRepo(t, fixture())
	r.commit(t, map[string]string{"base/deployment.yaml": deployment("web", 2), "values/h1.yaml": "color: red\n"})
	dir := t.TempDir()
	if _, err := gogit.PlainClone(dir, false, &gogit.CloneOptions{URL: r.gs.RepoURL(r.name)}); err != nil {
		t.Fatal(err)
	}
	src, err := OpenLocalGit(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := r.options(t, r.first, "origin/main")
	o.Source = src
	rep := runPreview(t, o)
	want := []string{"h1", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"}
	if got := names(rep, AppChanged); !slices.Equal(got, want) {
		t.Fatalf("changed %v, want %v", got, want)
	}
	if rep.Renders.Head != len(want) {
		t.Fatalf("head renders %d", rep.Renders.Head)
	}
	if _, err := src.Resolve(t.Context(), o.Repository, "no-such"); err == nil {
		t.Fatal("an unknown revision resolved")
	}
}
