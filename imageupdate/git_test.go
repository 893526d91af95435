package imageupdate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

const kustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
# the app's manifests
resources:
- deployment.yaml
images:
- name: app
  newTag: 1.0.0
`

// clone reads the served repository: the file at p and the commit
// messages from head, newest first.
func clone(t *testing.T, url, p string) (string, []string) {
	t.Helper()
	fsys := memfs.New()
	repo, err := git.Clone(memory.NewStorage(), fsys, &git.CloneOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	b, err := util.ReadFile(fsys, p)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := repo.Head()
	iter, err := repo.Log(&git.LogOptions{From: head.Hash()})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	_ = iter.ForEach(func(c *object.Commit) error { msgs = append(msgs, c.Message); return nil })
	return string(b), msgs
}

func kustomizeApp(reg *testRegistry, url string, annotations map[string]string) App {
	return App{
		Name: "shop", Annotations: annotations, RepoURL: url, Path: "app", TargetRevision: "main",
		SourceType: SourceKustomize, Images: []string{reg.host + "/team/app:1.0.0"}, Credentials: pushCreds(),
	}
}

func pushVersions(t *testing.T, reg *testRegistry) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, tag := range []string{"1.0.0", "1.0.1", "1.1.0-rc1", "latest"} {
		reg.push(t, "team/app", tag, testImage(t, base.Add(time.Duration(i)*time.Hour), "linux/amd64"))
	}
}

// ~1.0 over 1.0.0, 1.0.1, 1.1.0-rc1 and latest picks 1.0.1; the
// kustomization's images: entry is rewritten (its comment kept), committed
// with Argo's message and pushed. The step after: a second update writes
// nothing, both when the app already runs 1.0.1 and when only Git says so.
func TestSemverConstraintCommitsToKustomization(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	pushVersions(t, reg)
	_, url := startGit(t, "shop", fstest.MapFS{"app/kustomization.yaml": {Data: []byte(kustomization)}, "app/deployment.yaml": {Data: []byte("kind: Deployment\n")}})
	u := New(testOptions())
	app := kustomizeApp(reg, url, ann("image-list", "web="+reg.host+"/team/app:~1.0", "web.kustomize.image-name", "app",
		"write-back-method", "git", "write-back-target", "kustomization"))
	res, err := u.Update(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || res.Changes[0].NewTag != "1.0.1" || res.Changes[0].OldTag != "1.0.0" {
		t.Fatalf("changes = %+v", res.Changes)
	}
	if res.Commit == "" || res.Branch != "main" || res.Attempts != 1 {
		t.Fatalf("commit %q branch %q attempts %d", res.Commit, res.Branch, res.Attempts)
	}
	got, msgs := clone(t, url, "app/kustomization.yaml")
	for _, want := range []string{"newTag: 1.0.1", "newName: " + reg.host + "/team/app", "# the app's manifests", "- deployment.yaml"} {
		if !strings.Contains(got, want) {
			t.Errorf("kustomization lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasPrefix(msgs[0], "build: automatic update of shop") || !strings.Contains(msgs[0], "tag '1.0.0' to '1.0.1'") {
		t.Errorf("commit message %q", msgs[0])
	}

	// The app now runs 1.0.1: nothing to change.
	app.Images = []string{reg.host + "/team/app:1.0.1"}
	res, err = u.Update(context.Background(), app)
	if err != nil || len(res.Changes) != 0 || res.Commit != "" {
		t.Fatalf("second update: %+v, %v", res, err)
	}
	// The app still runs 1.0.0 (not synced yet) but Git says 1.0.1: no
	// second commit.
	app.Images = []string{reg.host + "/team/app:1.0.0"}
	res, err = u.Update(context.Background(), app)
	if err != nil || res.Commit != "" || len(res.Files) != 0 {
		t.Fatalf("update before sync committed again: %+v, %v", res, err)
	}
	if _, msgs2 := clone(t, url, "app/kustomization.yaml"); len(msgs2) != len(msgs) {
		t.Fatalf("%d commits, want %d", len(msgs2), len(msgs))
	}
}

// Another committer pushes between the updater's clone and its push: the
// push is refused, the updater starts over on the new head, and both
// commits are on the branch.
func TestPushRaceRetriedKeepingBothCommits(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	pushVersions(t, reg)
	gs, url := startGit(t, "race", fstest.MapFS{"app/kustomization.yaml": {Data: []byte(kustomization)}, "app/deployment.yaml": {Data: []byte("kind: Deployment\n")}})
	opts := testOptions()
	opts.Git.beforePush = func(ctx context.Context, attempt int) error {
		if attempt != 1 {
			return nil
		}
		_, err := gs.Commit(ctx, "race", "a colleague's change", map[string][]byte{"app/deployment.yaml": []byte("kind: Deployment\nmetadata: {name: web}\n")})
		return err
	}
	u := New(opts)
	app := kustomizeApp(reg, url, ann("image-list", "web="+reg.host+"/team/app:~1.0", "web.kustomize.image-name", "app",
		"write-back-method", "git", "write-back-target", "kustomization"))
	res, err := u.Update(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 2 || res.Commit == "" {
		t.Fatalf("attempts %d commit %q, want a second, successful attempt", res.Attempts, res.Commit)
	}
	got, msgs := clone(t, url, "app/kustomization.yaml")
	dep, _ := clone(t, url, "app/deployment.yaml")
	if !strings.Contains(got, "newTag: 1.0.1") || !strings.Contains(dep, "name: web") {
		t.Fatalf("a commit was lost:\n%s\n%s", got, dep)
	}
	if len(msgs) != 3 || !strings.HasPrefix(msgs[0], "build: automatic update") || msgs[1] != "a colleague's change\n" {
		t.Fatalf("history = %q", msgs)
	}
}

// A write-back target that does not exist, and a constraint that does not
// parse: typed errors, and the branch does not move.
func TestBadWriteBackInputCommitsNothing(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	pushVersions(t, reg)
	gs, url := startGit(t, "bad", fstest.MapFS{"app/kustomization.yaml": {Data: []byte(kustomization)}, "app/deployment.yaml": {Data: []byte("kind: Deployment\n")}})
	before, err := gs.Head(context.Background(), "bad")
	if err != nil {
		t.Fatal(err)
	}
	u := New(testOptions())
	for name, c := range map[string]struct {
		ann  map[string]string
		want error
	}{
		"missing values file":   {ann("image-list", "web="+reg.host+"/team/app:~1.0", "write-back-method", "git", "write-back-target", "helmvalues:/nope/values.yaml"), ErrWriteBackTarget},
		"missing kustomization": {ann("image-list", "web="+reg.host+"/team/app:~1.0", "write-back-method", "git", "write-back-target", "kustomization:../other"), ErrWriteBackTarget},
		"escaping path":         {ann("image-list", "web="+reg.host+"/team/app:~1.0", "write-back-method", "git", "write-back-target", "kustomization:../../.."), ErrWriteBackTarget},
		"bad constraint":        {ann("image-list", "web="+reg.host+"/team/app:~>>1.0", "write-back-method", "git"), ErrConstraint},
		"bad regexp":            {ann("image-list", "web="+reg.host+"/team/app", "web.allow-tags", "regexp:([", "write-back-method", "git"), ErrConstraint},
		"unknown option":        {ann("image-list", "web="+reg.host+"/team/app", "web.update-strategy", "newest", "write-back-method", "git"), ErrAnnotation},
		"wrong credentials":     {ann("image-list", "web="+reg.host+"/team/app:~1.0", "write-back-method", "git:secret:argocd/git-creds", "write-back-target", "kustomization"), ErrCredentials},
	} {
		t.Run(name, func(t *testing.T) {
			app := kustomizeApp(reg, url, c.ann)
			if name == "missing values file" {
				app.SourceType = SourceHelm
			}
			res, err := u.Update(context.Background(), app)
			var e *Error
			if !errors.Is(err, c.want) || !errors.As(err, &e) || e.App != "shop" {
				t.Fatalf("err = %v (result %+v), want %v naming the app", err, res, c.want)
			}
			if res.Commit != "" || res.Override != nil {
				t.Fatalf("a failed update returned %+v", res)
			}
		})
	}
	after, err := gs.Head(context.Background(), "bad")
	if err != nil || after != before {
		t.Fatalf("head moved from %s to %s (%v)", before, after, err)
	}
}

func cloneBranch(t *testing.T, url, branch, p string) string {
	t.Helper()
	fsys := memfs.New()
	if _, err := git.Clone(memory.NewStorage(), fsys, &git.CloneOptions{URL: url, ReferenceName: plumbing.NewBranchReferenceName(branch), SingleBranch: true}); err != nil {
		t.Fatal(err)
	}
	b, err := util.ReadFile(fsys, p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A custom author and message template sign the commit; an image the app
// does not run is skipped unless force-update is set.
func TestCommitTemplateAndForceUpdate(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	pushVersions(t, reg)
	_, url := startGit(t, "tmpl", fstest.MapFS{"app/kustomization.yaml": {Data: []byte(kustomization)}})
	opts := testOptions()
	opts.Git.AuthorName, opts.Git.AuthorEmail = "bot", "bot@example.com"
	opts.Git.MessageTemplate = "chore({{.AppName}}): {{range .AppChanges}}{{.Image}} {{.OldTag}}->{{.NewTag}}{{end}}"
	u := New(opts)
	a := ann("image-list", "web="+reg.host+"/team/app:~1.0", "web.kustomize.image-name", "app", "write-back-method", "git", "write-back-target", "kustomization")
	app := kustomizeApp(reg, url, a)
	app.Images = []string{"nginx:1.27"}
	res, err := u.Update(context.Background(), app)
	if err != nil || len(res.Changes) != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, "force-update") {
		t.Fatalf("not running, not forced: %+v, %v", res, err)
	}
	a[Prefix+"web.force-update"] = "true"
	if res, err = u.Update(context.Background(), app); err != nil || res.Commit == "" {
		t.Fatalf("forced: %+v, %v", res, err)
	}
	fsys := memfs.New()
	repo, err := git.Clone(memory.NewStorage(), fsys, &git.CloneOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := repo.Head()
	c, err := repo.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if c.Author.Name != "bot" || c.Author.Email != "bot@example.com" || c.Message != "chore(shop): "+reg.host+"/team/app ->1.0.1" {
		t.Fatalf("author %s <%s>, message %q", c.Author.Name, c.Author.Email, c.Message)
	}
}
