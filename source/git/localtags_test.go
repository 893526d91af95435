package git

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/kubegitops/gitops/source"
)

// Local resolves a semver targetRevision over the clone's tags and
// honours tagPrefix as Source.Resolve does: a constraint is evaluated
// over the prefixed tags only, the prefix stripped (an annotated tag
// peeled to its commit); an exact version names prefix+version; a branch
// is not the prefix's business; without a prefix, a constraint picks the
// highest plain version tag, never a prefixed one.
func TestLocalSemverAndTagPrefix(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "--quiet", "--initial-branch=main")
	commits := map[string]string{}
	for i, tag := range []string{"component-a/1.0.0", "component-a/1.2.0", "component-b/2.0.0", "v1.5.0", "component-a/2.0.0-rc.1"} {
		runGit(t, dir, "commit", "--quiet", "--allow-empty", "-m", "commit "+strconv.Itoa(i))
		if tag == "component-a/1.2.0" {
			runGit(t, dir, "tag", "-a", "-m", "release", tag)
		} else {
			runGit(t, dir, "tag", tag)
		}
		commits[tag] = runGit(t, dir, "rev-parse", "HEAD")
	}
	l, err := OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := source.Repository{URL: "https://example.invalid/mono.git", TagPrefix: "component-a/"}
	for _, tc := range []struct {
		repo           source.Repository
		rev, want, ref string
	}{
		{a, "1.*", commits["component-a/1.2.0"], "refs/tags/component-a/1.2.0"},
		{a, ">=1.0.0", commits["component-a/1.2.0"], "refs/tags/component-a/1.2.0"},
		{a, "1.0.0", commits["component-a/1.0.0"], "refs/tags/component-a/1.0.0"},
		{a, "main", commits["component-a/2.0.0-rc.1"], ""},
		{source.Repository{}, "^1", commits["v1.5.0"], "refs/tags/v1.5.0"},
		{source.Repository{}, "component-b/2.0.0", commits["component-b/2.0.0"], ""},
	} {
		got, err := l.Resolve(ctx, tc.repo, tc.rev)
		if err != nil || got.Commit != tc.want || got.Ref != tc.ref {
			t.Errorf("Resolve(tagPrefix %q, %q) = %+v, %v; want %s %s", tc.repo.TagPrefix, tc.rev, got, err, tc.want, tc.ref)
		}
	}
	for _, tc := range []struct {
		repo source.Repository
		rev  string
	}{{a, "2.0.0"}, {a, ">=2.0.0"}, {source.Repository{}, "^3"}} {
		if got, err := l.Resolve(ctx, tc.repo, tc.rev); !errors.Is(err, source.ErrRevisionNotFound) {
			t.Errorf("Resolve(tagPrefix %q, %q) = %+v, %v; want not found", tc.repo.TagPrefix, tc.rev, got, err)
		}
	}
}
