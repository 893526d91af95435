package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// ErrWrongBranch is returned by CommitInClone when the clone has another
// branch checked out than the one the commit is for.
var ErrWrongBranch = errors.New("git: the clone has another branch checked out")

// CommitInClone makes the commit of req in the local clone at dir, on the
// branch it has checked out, and pushes nothing: for a CI pipeline that
// reviews or pushes the commit itself. That branch must be req.Target
// (req.Base when Target is empty; either empty: any), else ErrWrongBranch;
// a branch without commits yet (`git switch --orphan`) gets the first.
// Edit changes the clone's working tree, and the paths it returns are
// added and committed on top of the branch's tip; a Note is attached (to
// the commit, or to the tip when Edit wrote nothing) in the clone's notes
// reference, as CommitRequest describes. ContinueTarget and OrphanBase
// do not apply: the checked-out branch is the one committed to.
func CommitInClone(ctx context.Context, dir string, req CommitRequest) (CommitResult, error) {
	if req.Edit == nil {
		return CommitResult{}, errors.New("commit needs an Edit function")
	}
	repo, err := gogit.PlainOpenWithOptions(dir, &gogit.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return CommitResult{}, fmt.Errorf("open clone %s: %w", dir, err)
	}
	headRef, err := repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return CommitResult{}, fmt.Errorf("clone %s: HEAD: %w", dir, err)
	}
	branch := headRef.Target()
	if headRef.Type() != plumbing.SymbolicReference || !branch.IsBranch() {
		return CommitResult{}, fmt.Errorf("clone %s: HEAD is detached: %w", dir, ErrWrongBranch)
	}
	want := req.Target
	if want == "" {
		want = req.Base
	}
	if want != "" && branch.Short() != strings.TrimPrefix(want, "refs/heads/") {
		return CommitResult{}, fmt.Errorf("clone %s has %s checked out, not %s: %w", dir, branch.Short(), want, ErrWrongBranch)
	}
	var on plumbing.Hash
	if ref, err := repo.Storer.Reference(branch); err == nil {
		on = ref.Hash()
	} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return CommitResult{}, err
	}
	res := CommitResult{Branch: branch.Short(), Base: on.String()}
	if on.IsZero() {
		res.Base = ""
	}
	var notes plumbing.ReferenceName
	var notesAt plumbing.Hash
	var existing []byte
	if req.Note != nil {
		notes = NotesRef(req.Note.Namespace)
		if ref, err := repo.Storer.Reference(notes); err == nil {
			notesAt = ref.Hash()
		}
		if !on.IsZero() {
			if existing, _, err = readNote(repo.Storer, notesAt, on); err != nil {
				return res, err
			}
		}
		if req.Note.Skip != nil && req.Note.Skip(existing) {
			res.Skipped = true
			return res, nil
		}
	}
	wt, err := repo.Worktree()
	if err != nil {
		return res, err
	}
	paths, err := req.Edit(ctx, wt.Filesystem)
	if err != nil {
		return res, err
	}
	noted := on
	if len(paths) > 0 {
		for _, p := range paths {
			if _, err := wt.Add(strings.TrimPrefix(p, "/")); err != nil {
				return res, fmt.Errorf("add %s: %w", p, err)
			}
		}
		sig := req.Author
		h, err := wt.Commit(req.Message, &gogit.CommitOptions{Author: &sig, Committer: &sig})
		if err != nil {
			return res, fmt.Errorf("commit: %w", err)
		}
		res.Commit, noted = h.String(), h
	}
	if req.Note != nil && !noted.IsZero() && (res.Commit != "" || !bytes.Equal(existing, req.Note.Content)) {
		nh, err := addNote(repo.Storer, notesAt, noted, req.Note.Content, req.Author)
		if err != nil {
			return res, err
		}
		if err := repo.Storer.SetReference(plumbing.NewHashReference(notes, nh)); err != nil {
			return res, err
		}
		res.Noted = true
	}
	return res, nil
}
