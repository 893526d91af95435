package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-billy/v5"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source"
)

// noEdit is an Edit that writes nothing.
func noEdit(context.Context, billy.Filesystem) ([]string, error) { return nil, nil }

// TestCommitCreatesBranchesAndNotes pushes to git http-backend as Argo
// CD's source hydrator does: a missing base branch is created with an
// empty initial commit the new commit builds on; a note rides with the
// commit in the same push and `git notes` reads it; a second run whose
// Edit changes nothing moves only the note; a Skip that recognises the
// note pushes nothing; a ContinueTarget branch starts from the base and
// then moves forward on its own tip.
func TestCommitCreatesBranchesAndNotes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := gitserver.DefaultOptions()
	opts.PushUsername, opts.PushPassword = "pusher", "push-secret-value"
	srv, mainAt := testfiles.GitRepo(t, opts, "hyd", fstest.MapFS{"README.md": {Data: []byte("dry\n")}})
	git := func(args ...string) string {
		t.Helper()
		out, err := srv.Git(ctx, "hyd", args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	s := newSource(t)
	repo := source.Repository{URL: srv.RepoURL("hyd"), Credentials: &source.Credentials{Username: "pusher", Password: "push-secret-value"}}
	note := func(dry string) *Note {
		return &Note{Namespace: "hydrator.metadata", Content: []byte(fmt.Sprintf("{\"drySha\":%q}\n", dry))}
	}

	if _, err := s.Commit(ctx, repo, CommitRequest{Base: "env/dev", Edit: writeFile("app/manifest.yaml", "a: 1\n"), Message: "m", Author: testAuthor}); !errors.Is(err, source.ErrRevisionNotFound) {
		t.Fatalf("missing base without OrphanBase: %v", err)
	}
	first, err := s.Commit(ctx, repo, CommitRequest{Base: "env/dev", OrphanBase: true, Edit: writeFile("app/manifest.yaml", "a: 1\n"),
		Message: "hydrate one", Author: testAuthor, Note: note("one")})
	if err != nil {
		t.Fatal(err)
	}
	if got := git("rev-parse", "refs/heads/env/dev"); got != first.Commit || !first.Noted || first.Branch != "env/dev" {
		t.Fatalf("env/dev at %s, result %+v", got, first)
	}
	if got := git("log", "--format=%s|%P", "env/dev"); !strings.HasPrefix(got, "hydrate one|"+first.Base+"\nInitial commit for env/dev|") {
		t.Fatalf("history of env/dev:\n%s", got)
	}
	if got := git("ls-tree", "-r", "--name-only", first.Base); got != "" {
		t.Fatalf("the initial commit holds files: %q", got)
	}
	if got := git("notes", "--ref", "hydrator.metadata", "show", first.Commit); got != `{"drySha":"one"}` {
		t.Fatalf("note = %q", got)
	}
	if got := git("rev-parse", "refs/heads/main"); got != mainAt {
		t.Fatalf("main moved to %s", got)
	}

	// Nothing to commit: only the note moves, onto the same tip.
	again, err := s.Commit(ctx, repo, CommitRequest{Base: "env/dev", OrphanBase: true, Edit: noEdit, Author: testAuthor, Note: note("two")})
	if err != nil {
		t.Fatal(err)
	}
	if again.Commit != "" || !again.Noted || again.Base != first.Commit || git("rev-parse", "env/dev") != first.Commit {
		t.Fatalf("note-only run: %+v", again)
	}
	if got := git("notes", "--ref", "hydrator.metadata", "show", first.Commit); got != `{"drySha":"two"}` {
		t.Fatalf("note = %q", got)
	}
	notesAt := git("rev-parse", "refs/notes/hydrator.metadata")
	if got := git("log", "--format=%s", "refs/notes/hydrator.metadata"); got != "Notes added by 'git notes add'\nNotes added by 'git notes add'" {
		t.Fatalf("notes history:\n%s", got)
	}

	// A Skip that knows the note stops before Edit.
	var seen string
	skipped, err := s.Commit(ctx, repo, CommitRequest{Base: "env/dev", Author: testAuthor,
		Edit: func(context.Context, billy.Filesystem) ([]string, error) {
			t.Error("Edit ran after Skip")
			return nil, nil
		},
		Note: &Note{Namespace: "hydrator.metadata", Content: []byte("x"), Skip: func(existing []byte) bool {
			seen = string(existing)
			return strings.Contains(seen, `"two"`)
		}}})
	if err != nil || !skipped.Skipped || skipped.Noted || seen != "{\"drySha\":\"two\"}\n" {
		t.Fatalf("skip: %+v, %v, saw %q", skipped, err, seen)
	}
	if got := git("rev-parse", "refs/notes/hydrator.metadata"); got != notesAt {
		t.Fatal("a skipped commit moved the notes")
	}

	// A staging branch starts at the base's tip, then continues on its own.
	next, err := s.Commit(ctx, repo, CommitRequest{Base: "env/dev", Target: "env/dev-next", ContinueTarget: true,
		Edit: writeFile("app/manifest.yaml", "a: 2\n"), Message: "stage two", Author: testAuthor, Note: note("three")})
	if err != nil {
		t.Fatal(err)
	}
	if next.Base != first.Commit || git("rev-parse", "env/dev-next") != next.Commit || git("rev-parse", "env/dev") != first.Commit {
		t.Fatalf("staging branch: %+v", next)
	}
	next2, err := s.Commit(ctx, repo, CommitRequest{Base: "env/dev", Target: "env/dev-next", ContinueTarget: true,
		Edit: writeFile("app/manifest.yaml", "a: 3\n"), Message: "stage three", Author: testAuthor})
	if err != nil {
		t.Fatal(err)
	}
	if next2.Base != next.Commit || git("rev-parse", "env/dev-next") != next2.Commit {
		t.Fatalf("the staging branch was not continued: %+v (was at %s)", next2, next.Commit)
	}
	if got := git("show", "env/dev-next:app/manifest.yaml"); got != "a: 3" {
		t.Fatalf("staged manifest %q", got)
	}
}

// TestNotesReadAndWriteGitsLayouts: a note git keeps fanned out (ab/cdef…)
// is read, and a note written next to it leaves both readable by `git
// notes`; CommitInClone commits on the clone's branch and refuses another.
func TestNotesReadAndWriteGitsLayouts(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "env/dev")
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", ".")
	run("commit", "-q", "-m", "first")
	c1 := run("rev-parse", "HEAD")
	// The fanned-out layout git uses for large note sets, built by hand.
	blob := strings.TrimSpace(pipeGit(t, dir, "{\"drySha\":\"old\"}\n", "hash-object", "-w", "--stdin"))
	sub := strings.TrimSpace(pipeGit(t, dir, "100644 blob "+blob+"\t"+c1[2:]+"\n", "mktree"))
	root := strings.TrimSpace(pipeGit(t, dir, "040000 tree "+sub+"\t"+c1[:2]+"\n", "mktree"))
	notes := run("commit-tree", root, "-m", "fanned")
	run("update-ref", "refs/notes/hydrator.metadata", notes)
	if got := run("notes", "--ref", "hydrator.metadata", "show", c1); got != `{"drySha":"old"}` {
		t.Fatalf("git reads the hand-made layout as %q", got)
	}

	var existing string
	res, err := CommitInClone(context.Background(), dir, CommitRequest{Target: "env/dev", Edit: writeFile("app/manifest.yaml", "a: 1\n"),
		Message: "hydrate", Author: testAuthor,
		Note: &Note{Namespace: "hydrator.metadata", Content: []byte("{\"drySha\":\"new\"}\n"), Skip: func(b []byte) bool { existing = string(b); return false }}})
	if err != nil {
		t.Fatal(err)
	}
	if existing != "{\"drySha\":\"old\"}\n" {
		t.Fatalf("fanned-out note read as %q", existing)
	}
	if res.Commit != run("rev-parse", "HEAD") || res.Base != c1 || !res.Noted {
		t.Fatalf("result %+v", res)
	}
	if got := run("show", "HEAD:app/manifest.yaml"); got != "a: 1" {
		t.Fatalf("committed manifest %q", got)
	}
	if got := run("notes", "--ref", "hydrator.metadata", "show", res.Commit); got != `{"drySha":"new"}` {
		t.Fatalf("new note %q", got)
	}
	if got := run("notes", "--ref", "hydrator.metadata", "show", c1); got != `{"drySha":"old"}` {
		t.Fatalf("old note after the write %q", got)
	}
	// Replacing a fanned-out note drops the old place.
	if _, err := CommitInClone(context.Background(), dir, CommitRequest{Edit: noEdit, Author: testAuthor,
		Note: &Note{Namespace: "hydrator.metadata", Content: []byte("{\"drySha\":\"newer\"}\n")}}); err != nil {
		t.Fatal(err)
	}
	if got := run("notes", "--ref", "hydrator.metadata", "show", res.Commit); got != `{"drySha":"newer"}` {
		t.Fatalf("replaced note %q", got)
	}
	if got := run("notes", "--ref", "hydrator.metadata", "list"); strings.Count(got, "\n") != 1 {
		t.Fatalf("notes listed:\n%s", got)
	}
	if _, err := CommitInClone(context.Background(), dir, CommitRequest{Target: "env/prod", Edit: noEdit, Author: testAuthor}); !errors.Is(err, ErrWrongBranch) {
		t.Fatalf("wrong branch: %v", err)
	}
}

// pipeGit runs git in dir with stdin and returns its output.
func pipeGit(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
