package git

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	// its write-back branches.
	Target string
	// Edit changes the checked-out tree of Base's tip and returns the
	// slash-separated paths it wrote (an empty list: nothing to commit).
	// It runs once per attempt, between fetch and push.
	Edit func(ctx context.Context, fs billy.Filesystem) ([]string, error)
	// Message and Author of the commit (the author commits too).
	Message string
	Author  object.Signature
}

// CommitResult says what Commit did.
type CommitResult struct {
	// Commit is the new commit's id; empty when Edit changed nothing.
	Commit string
	// Branch is the branch pushed.
	Branch string
	// Base is the commit the new one builds on.
	Base string
}

// Commit makes one commit in process and pushes it: it fetches Base's tip
// (depth 1, into a temporary store), checks it out in memory, runs Edit,
// commits what Edit wrote and pushes the objects the remote lacks, through
// the same transports, credentials, URL policy and timeout as fetches (SSH
// with host keys enforced, or smart HTTP). When someone else moved the
// branch meanwhile it returns ErrBranchMoved and nothing is written; the
// caller decides whether to start over. An error of Edit is returned as it
// is; every other error is a *source.Error with the repository redacted.
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

	baseRef, baseHash, err := s.fetchBranchTip(ctx, e, st, req.Base)
	if err != nil {
		return CommitResult{}, err
	}
	res := CommitResult{Base: baseHash.String(), Branch: baseRef.Short()}
	target := baseRef
	if req.Target != "" {
		target = plumbing.NewBranchReferenceName(req.Target)
	}
	res.Branch = target.Short()
	if err := st.SetReference(plumbing.NewHashReference(baseRef, baseHash)); err != nil {
		return res, err
	}
	if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, baseRef)); err != nil {
		return res, err
	}
	repo, err := gogit.Open(st, memfs.New())
	if err != nil {
		return res, err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return res, err
	}
	if err := wt.Reset(&gogit.ResetOptions{Commit: baseHash, Mode: gogit.HardReset}); err != nil {
		return res, fmt.Errorf("checkout %s: %w", short(baseHash), err)
	}
	paths, err := req.Edit(ctx, wt.Filesystem)
	if err != nil {
		return res, &editError{err}
	}
	if len(paths) == 0 {
		return res, nil
	}
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
	objects, err := newObjects(st, h, baseHash)
	if err != nil {
		return res, err
	}
	up := refUpdate{name: target, old: baseHash, new: h, force: target != baseRef}
	if err := s.push(ctx, e, st, objects, up); err != nil {
		return res, err
	}
	res.Commit = h.String()
	return res, nil
}

// fetchBranchTip fetches the tip of branch (the remote HEAD's branch when
// empty) at depth 1 into st.
func (s *Source) fetchBranchTip(ctx context.Context, e endpoint, st *filesystem.Storage, branch string) (plumbing.ReferenceName, plumbing.Hash, error) {
	sess, err := s.openSession(ctx, e)
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	defer func() { _ = sess.Close() }()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	ref := plumbing.NewBranchReferenceName(branch)
	if branch == "" {
		refs, err := ar.AllReferences()
		if err != nil {
			return "", plumbing.ZeroHash, err
		}
		head, ok := refs[plumbing.HEAD]
		if !ok || head.Type() != plumbing.SymbolicReference {
			return "", plumbing.ZeroHash, fmt.Errorf("the remote HEAD names no branch; give one: %w", source.ErrRevisionNotFound)
		}
		ref = head.Target()
	}
	h, ok := ar.References[ref.String()]
	if !ok {
		return "", plumbing.ZeroHash, fmt.Errorf("branch %s: %w", ref.Short(), source.ErrRevisionNotFound)
	}
	if err := s.uploadPack(ctx, sess, ar, st, []plumbing.Hash{h}, 1, false); err != nil {
		return "", plumbing.ZeroHash, err
	}
	return ref, h, nil
}

// newObjects lists the objects of commit h that base's tree lacks: the
// commit, and the trees and blobs it added (what the remote, which has
// base, needs).
func newObjects(st storer.EncodedObjectStorer, h, base plumbing.Hash) ([]plumbing.Hash, error) {
	have := map[plumbing.Hash]bool{}
	bc, err := object.GetCommit(st, base)
	if err != nil {
		return nil, err
	}
	if err := walkTree(st, bc.TreeHash, func(plumbing.Hash) bool { return true }, have); err != nil {
		return nil, err
	}
	c, err := object.GetCommit(st, h)
	if err != nil {
		return nil, err
	}
	out := map[plumbing.Hash]bool{}
	if err := walkTree(st, c.TreeHash, func(x plumbing.Hash) bool { return !have[x] }, out); err != nil {
		return nil, err
	}
	list := []plumbing.Hash{h}
	for x := range out {
		list = append(list, x)
	}
	sort.Slice(list[1:], func(i, j int) bool { return list[1+i].String() < list[1+j].String() })
	return list, nil
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
