package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/kubegitops/gitops/source"
)

// CommitRequest asks Commit for one commit on a branch.
type CommitRequest struct {
	// Base is the branch the commit builds on; empty means the branch the
	// remote's HEAD names.
	Base string
	// Target is the branch pushed. Empty or equal to Base: Base moves
	// forward (fast-forward only). Another name: Target is reset to Base
	// plus the commit (a forced push), as Argo CD Image Updater does with
	// its write-back branches, unless ContinueTarget.
	Target string
	// ContinueTarget makes a Target other than Base a branch of its own:
	// when it exists the commit builds on its tip and moves it forward
	// (fast-forward only); when it does not, it starts at Base's tip (Argo
	// CD's source hydrator committing to a hydrateTo branch).
	ContinueTarget bool
	// OrphanBase creates Base when it does not exist: an empty commit
	// without parent ("Initial commit for <Base>"), pushed as Base, which
	// the commit (and a new Target) then builds on, as Argo CD's source
	// hydrator creates a missing sync branch. Without it a missing Base is
	// source.ErrRevisionNotFound.
	OrphanBase bool
	// Edit changes the checked-out tree of the tip the commit builds on
	// and returns the slash-separated paths it wrote (an empty list:
	// nothing to commit). It runs once per attempt, between fetch and
	// push.
	Edit func(ctx context.Context, fs billy.Filesystem) ([]string, error)
	// Message and Author of the commit (the author commits too).
	Message string
	Author  object.Signature
	// Note, when set, attaches a git note to the commit made, or to the
	// tip built on when Edit changes nothing, pushed with it.
	Note *Note
}

// Note is a git note attached by Commit (`git notes --ref Namespace add -f`).
type Note struct {
	// Namespace is the notes reference: "hydrator.metadata" is
	// refs/notes/hydrator.metadata (see NotesRef).
	Namespace string
	// Content is the note's text (git's own notes end with a newline).
	Content []byte
	// Skip, when set, is called before Edit with the note the tip to
	// build on already has in Namespace (nil when none): true ends Commit
	// there with nothing written (CommitResult.Skipped).
	Skip func(existing []byte) bool
}

// CommitResult says what Commit did.
type CommitResult struct {
	// Commit is the new commit's id; empty when Edit changed nothing.
	Commit string
	// Branch is the branch pushed.
	Branch string
	// Base is the commit the new one builds on (the branch's tip when
	// nothing was committed).
	Base string
	// Skipped reports that Note.Skip ended the commit before Edit.
	Skipped bool
	// Noted reports that the note was pushed.
	Noted bool
}

// Commit makes one commit in process and pushes it: it fetches the tip to
// build on (depth 1, into a temporary store; with a Note, the notes
// reference's tip too), checks it out in memory, runs Edit, commits what
// Edit wrote and pushes the objects the remote lacks, through the same
// transports, credentials, URL policy and timeout as fetches (SSH with
// host keys enforced, or smart HTTP). Every reference it moves (the
// branch, a created Base, the notes) is updated in one push, atomic when
// the server offers it. When someone else moved one of them meanwhile it
// returns ErrBranchMoved and nothing is written; the caller decides
// whether to start over. An error of Edit is returned as it is; every
// other error is a *source.Error with the repository redacted.
func (s *Source) Commit(ctx context.Context, repo source.Repository, req CommitRequest) (CommitResult, error) {
	e, err := parseEndpoint(repo, s.opts.Policy)
	if err != nil {
		return CommitResult{}, wrapErr(endpoint{redacted: source.RedactURL(repo.URL)}, "commit", req.Base, err)
	}
	if req.Edit == nil {
		return CommitResult{}, wrapErr(e, "commit", req.Base, errors.New("commit needs an Edit function"))
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res, err := s.commit(ctx, e, req)
	var ee *editError
	if errors.As(err, &ee) {
		return res, ee.err
	}
	if err != nil {
		s.metrics.request("push", err)
		return res, wrapErr(e, "commit", req.Base, timeoutOr(ctx, err))
	}
	s.metrics.request("push", nil)
	return res, nil
}

func (s *Source) commit(ctx context.Context, e endpoint, req CommitRequest) (CommitResult, error) {
	dir, err := os.MkdirTemp("", "gitops-commit-")
	if err != nil {
		return CommitResult{}, err
	}
	defer os.RemoveAll(dir)
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	defer st.Close()

	p, err := s.fetchForCommit(ctx, e, st, req)
	if err != nil {
		return CommitResult{}, err
	}
	res := CommitResult{Branch: p.target.Short()}
	var updates []refUpdate
	remoteHas := []plumbing.Hash{p.on, p.notesAt}
	if p.orphan {
		h, err := writeObject(st, &object.Commit{Author: req.Author, Committer: req.Author,
			Message: "Initial commit for " + p.base.Short() + "\n", TreeHash: emptyTree(st)})
		if err != nil {
			return res, err
		}
		if p.on.IsZero() {
			p.on = h
		}
		updates = append(updates, refUpdate{name: p.base, new: h})
	}
	res.Base = p.on.String()
	var existing []byte
	if req.Note != nil {
		if existing, _, err = readNote(st, p.notesAt, p.on); err != nil {
			return res, err
		}
		if req.Note.Skip != nil && req.Note.Skip(existing) {
			res.Skipped = true
			return res, nil
		}
	}
	h, err := s.commitEdit(ctx, st, p.on, req)
	if err != nil {
		return res, err
	}
	noted := p.on
	if !h.IsZero() {
		noted = h
		up := refUpdate{name: p.target, old: p.targetAt, new: h, force: p.force}
		if len(updates) > 0 && updates[0].name == p.target {
			updates[0] = refUpdate{name: p.target, new: h} // the new branch is the commit on its first one
		} else {
			updates = append(updates, up)
		}
	}
	if req.Note != nil && (!h.IsZero() || !bytes.Equal(existing, req.Note.Content)) {
		nh, err := addNote(st, p.notesAt, noted, req.Note.Content, req.Author)
		if err != nil {
			return res, err
		}
		updates = append(updates, refUpdate{name: p.notes, old: p.notesAt, new: nh})
	}
	if len(updates) == 0 {
		return res, nil
	}
	objects, err := missingObjects(st, updates, remoteHas)
	if err != nil {
		return res, err
	}
	if err := s.push(ctx, e, st, objects, updates...); err != nil {
		return res, err
	}
	if !h.IsZero() {
		res.Commit = h.String()
	}
	res.Noted = req.Note != nil && updates[len(updates)-1].name == p.notes
	return res, nil
}

// commitPlan is what Commit fetched: the references it may move and the
// tip it builds on.
type commitPlan struct {
	// base and target are the branches; targetAt is target's tip (zero
	// when it does not exist), and force says the push replaces it.
	base, target plumbing.ReferenceName
	targetAt     plumbing.Hash
	force        bool
	// on is the tip the commit builds on; orphan says it is to be made
	// (Base does not exist and OrphanBase).
	on     plumbing.Hash
	orphan bool
	// notes is the notes reference and notesAt its tip (zero when none).
	notes   plumbing.ReferenceName
	notesAt plumbing.Hash
}

// fetchForCommit reads the remote's references and fetches, at depth 1,
// the tip to build on and the notes' tip.
func (s *Source) fetchForCommit(ctx context.Context, e endpoint, st *filesystem.Storage, req CommitRequest) (commitPlan, error) {
	var p commitPlan
	sess, err := s.openSession(ctx, e)
	if err != nil {
		return p, err
	}
	defer func() { _ = sess.Close() }()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return p, err
	}
	p.base = plumbing.NewBranchReferenceName(req.Base)
	if req.Base == "" {
		refs, err := ar.AllReferences()
		if err != nil {
			return p, err
		}
		head, ok := refs[plumbing.HEAD]
		if !ok || head.Type() != plumbing.SymbolicReference {
			return p, fmt.Errorf("the remote HEAD names no branch; give one: %w", source.ErrRevisionNotFound)
		}
		p.base = head.Target()
	}
	baseAt, baseOK := ar.References[p.base.String()]
	switch {
	case baseOK:
		p.on = baseAt
	case req.OrphanBase:
		p.orphan = true
	default:
		return p, fmt.Errorf("branch %s: %w", p.base.Short(), source.ErrRevisionNotFound)
	}
	p.target, p.targetAt = p.base, baseAt
	if req.Target != "" && req.Target != p.base.Short() {
		p.target = plumbing.NewBranchReferenceName(req.Target)
		p.targetAt = ar.References[p.target.String()]
		p.force = !req.ContinueTarget
		if req.ContinueTarget && !p.targetAt.IsZero() {
			p.on = p.targetAt // a missing Base is still created, as the branch synced from
		}
	}
	wants := []plumbing.Hash{}
	if !p.on.IsZero() {
		wants = append(wants, p.on)
	}
	if req.Note != nil {
		p.notes = NotesRef(req.Note.Namespace)
		if h, ok := ar.References[p.notes.String()]; ok {
			p.notesAt = h
			wants = append(wants, h)
		}
	}
	if len(wants) == 0 {
		return p, nil
	}
	return p, s.uploadPack(ctx, sess, ar, st, wants, 1, false)
}

// commitEdit checks out the tree of on, runs Edit and commits what it
// wrote on top of on; zero when it wrote nothing.
func (s *Source) commitEdit(ctx context.Context, st *filesystem.Storage, on plumbing.Hash, req CommitRequest) (plumbing.Hash, error) {
	ref := plumbing.ReferenceName("refs/heads/gitops-commit")
	if err := st.SetReference(plumbing.NewHashReference(ref, on)); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, ref)); err != nil {
		return plumbing.ZeroHash, err
	}
	repo, err := gogit.Open(st, memfs.New())
	if err != nil {
		return plumbing.ZeroHash, err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := wt.Reset(&gogit.ResetOptions{Commit: on, Mode: gogit.HardReset}); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("checkout %s: %w", short(on), err)
	}
	paths, err := req.Edit(ctx, wt.Filesystem)
	if err != nil {
		return plumbing.ZeroHash, &editError{err}
	}
	if len(paths) == 0 {
		return plumbing.ZeroHash, nil
	}
	for _, p := range paths {
		if _, err := wt.Add(strings.TrimPrefix(p, "/")); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("add %s: %w", p, err)
		}
	}
	sig := req.Author
	h, err := wt.Commit(req.Message, &gogit.CommitOptions{Author: &sig, Committer: &sig})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit: %w", err)
	}
	return h, nil
}

// emptyTree stores git's empty tree and returns it.
func emptyTree(st storer.EncodedObjectStorer) plumbing.Hash {
	h, _ := writeObject(st, &object.Tree{})
	return h
}

// missingObjects lists what the remote lacks of the updates' new commits:
// each commit not already there and the trees and blobs its tree added
// over the trees of remoteHas, the commits fetched from it (zero ones are
// skipped).
func missingObjects(st storer.EncodedObjectStorer, updates []refUpdate, remoteHas []plumbing.Hash) ([]plumbing.Hash, error) {
	have := map[plumbing.Hash]bool{}
	for _, c := range remoteHas {
		if c.IsZero() {
			continue
		}
		if err := haveCommitTree(st, c, have); err != nil {
			return nil, err
		}
	}
	out := map[plumbing.Hash]bool{}
	var list []plumbing.Hash
	for _, up := range updates {
		for c := up.new; !c.IsZero() && !have[c] && !out[c]; {
			out[c] = true
			list = append(list, c)
			commit, err := object.GetCommit(st, c)
			if err != nil {
				return nil, err
			}
			if err := walkTree(st, commit.TreeHash, func(x plumbing.Hash) bool { return !have[x] }, out); err != nil {
				return nil, err
			}
			if len(commit.ParentHashes) == 0 {
				break
			}
			c = commit.ParentHashes[0]
		}
	}
	rest := make([]plumbing.Hash, 0, len(out))
	for x := range out {
		if !slices.Contains(list, x) {
			rest = append(rest, x)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].String() < rest[j].String() })
	return append(list, rest...), nil
}

// haveCommitTree marks commit c and every tree and blob of its tree as
// present.
func haveCommitTree(st storer.EncodedObjectStorer, c plumbing.Hash, have map[plumbing.Hash]bool) error {
	have[c] = true
	commit, err := object.GetCommit(st, c)
	if err != nil {
		return err
	}
	return walkTree(st, commit.TreeHash, func(plumbing.Hash) bool { return true }, have)
}

// walkTree adds to seen the tree t and every tree and blob below it for
// which keep says yes, not descending into trees keep refuses (an
// unchanged subtree is all present on the remote).
func walkTree(st storer.EncodedObjectStorer, t plumbing.Hash, keep func(plumbing.Hash) bool, seen map[plumbing.Hash]bool) error {
	if seen[t] || !keep(t) {
		return nil
	}
	seen[t] = true
	tree, err := object.GetTree(st, t)
	if err != nil {
		return err
	}
	for _, en := range tree.Entries {
		switch en.Mode {
		case filemode.Dir:
			if err := walkTree(st, en.Hash, keep, seen); err != nil {
				return err
			}
		case filemode.Submodule:
			// a commit of another repository: nothing to send
		default:
			if keep(en.Hash) {
				seen[en.Hash] = true
			}
		}
	}
	return nil
}

// editError carries an error of CommitRequest.Edit out unchanged.
type editError struct{ err error }

// Error implements error.
func (e *editError) Error() string { return e.err.Error() }
