package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/kubegitops/gitops/source"
)

var _ source.SignatureSource = (*Source)(nil)

// errIncomplete says the store lacks objects a listing needs: the tag
// object, the commit, or (deep) part of its history.
var errIncomplete = errors.New("objects missing from the store")

// Signatures lists the signed objects of rev as req asks (see
// source.SignatureRequest), from the object store: the annotated tag when
// rev.Ref is an annotated tag (its object id from the repository's
// advertised refs, shared with Resolve), the commit, and, when req.Deep,
// its history back to the good seal commits. What the store lacks is
// fetched first: the tag object, and for Deep the whole history of the
// commit. Errors are *source.Error naming the repository and commit.
func (s *Source) Signatures(ctx context.Context, repo source.Repository, rev source.Revision, req source.SignatureRequest) ([]source.Signature, error) {
	e, err := parseEndpoint(repo, s.opts.Policy)
	if err != nil {
		return nil, wrapErr(endpoint{redacted: source.RedactURL(repo.URL)}, "signatures", rev.Commit, err)
	}
	if !isFullHash(rev.Commit) {
		return nil, wrapErr(e, "signatures", rev.Commit, fmt.Errorf("not a full commit id (Resolve it first): %w", source.ErrRevisionNotFound))
	}
	if req.Verifier == nil {
		return nil, wrapErr(e, "signatures", rev.Commit, errors.New("no signature verifier"))
	}
	want := signedObjects{commit: plumbing.NewHash(rev.Commit), deep: req.Deep}
	if name, ok := strings.CutPrefix(rev.Ref, "refs/tags/"); ok {
		tag, err := s.tagObject(ctx, e, rev.Ref)
		if err != nil {
			return nil, wrapErr(e, "signatures", rev.Commit, err)
		}
		want.tag, want.tagName = tag, name
	}
	store, err := s.store(e)
	if err != nil {
		return nil, wrapErr(e, "signatures", rev.Commit, err)
	}
	for attempt := 0; ; attempt++ {
		var sigs []source.Signature
		err := errIncomplete
		if g := store.current(); g.acquire() {
			sigs, err = want.list(g, req.Verifier)
			g.release()
		}
		if !errors.Is(err, errIncomplete) {
			if err != nil {
				return nil, wrapErr(e, "signatures", rev.Commit, err)
			}
			return sigs, nil
		}
		if attempt == 1 {
			return nil, wrapErr(e, "signatures", rev.Commit, fmt.Errorf("commit %s: %w", want.commit, err))
		}
		if err := s.fetchSigned(ctx, e, store, want); err != nil {
			return nil, wrapErr(e, "fetch", rev.Commit, err)
		}
	}
}

// tagObject returns the object id of the annotated tag ref, or the zero
// hash for a lightweight tag, from the advertised refs (cached as Resolve
// caches them).
func (s *Source) tagObject(ctx context.Context, e endpoint, ref string) (plumbing.Hash, error) {
	t, err := s.refs.get(ctx, e.storeKey(), source.RepositoryKey(e.redacted), func(ctx context.Context) (refTable, error) {
		t, err := s.listRefs(ctx, e)
		s.metrics.request("ls-remote", err)
		return t, err
	})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if h, ok := t.tagObjects[ref]; ok {
		return plumbing.NewHash(h), nil
	}
	return plumbing.ZeroHash, nil
}

// fetchSigned fetches what want lists, sharing one fetch among concurrent
// callers as fetchShared does: the commit with its tag object, at the
// configured depth, or with its whole history when deep.
func (s *Source) fetchSigned(ctx context.Context, e endpoint, store *objectStore, want signedObjects) error {
	depth := s.opts.Depth
	if want.deep {
		depth = unshallowDepth
	}
	var also []plumbing.Hash
	if !want.tag.IsZero() {
		also = append(also, want.tag)
	}
	key := fmt.Sprintf("%s/%s/signed/%s/%d", e.storeKey(), want.commit, want.tag, depth)
	ch := s.fetches.DoChan(key, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.Timeout)
		defer cancel()
		if err := store.lock(fctx); err != nil {
			return nil, timeoutOr(fctx, err)
		}
		defer store.unlock()
		s.opts.Logger.V(1).Info("fetching for signatures", "repository", e.redacted, "commit", want.commit.String(), "deep", want.deep)
		start := time.Now()
		err := timeoutOr(fctx, s.fetchObjects(fctx, e, store, want.commit, also, depth))
		s.metrics.fetched(start, err)
		return nil, err
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// objectReader reads objects of one generation.
type objectReader interface {
	EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error)
}

// signedObjects is what one listing covers.
type signedObjects struct {
	commit  plumbing.Hash
	tag     plumbing.Hash // zero: no annotated tag
	tagName string
	deep    bool
}

// list lists the signatures from r, or fails with errIncomplete when r
// lacks an object.
func (w signedObjects) list(r objectReader, v source.SignatureVerifier) ([]source.Signature, error) {
	var out []source.Signature
	if !w.tag.IsZero() {
		sig, err := tagSignature(r, w.tag, w.tagName, v)
		if err != nil {
			return nil, err
		}
		out = append(out, sig)
		if !w.deep {
			return out, nil
		}
	}
	commits, err := w.commits(r, v)
	if err != nil {
		return nil, err
	}
	for _, c := range commits {
		out = append(out, commitSignature(c, v))
	}
	return out, nil
}

// commits are the commits a listing checks: the commit alone, or (deep)
// `git rev-list --boundary <commit> --not <good seals>`, newest first.
func (w signedObjects) commits(r objectReader, v source.SignatureVerifier) ([]*object.Commit, error) {
	head, err := readCommit(r, w.commit)
	if err != nil {
		return nil, err
	}
	if !w.deep {
		return []*object.Commit{head}, nil
	}
	all, err := ancestry(r, head)
	if err != nil {
		return nil, err
	}
	var seals []*object.Commit
	for _, c := range all {
		if isSeal(c) && commitSignature(c, v).Result == source.SignatureGood {
			seals = append(seals, c)
		}
	}
	if len(seals) == 0 {
		return all, nil
	}
	for _, c := range seals {
		if c.Hash == head.Hash {
			return []*object.Commit{head}, nil
		}
	}
	sealed, err := ancestry(r, seals...)
	if err != nil {
		return nil, err
	}
	excluded := make(map[plumbing.Hash]bool, len(sealed))
	for _, c := range sealed {
		excluded[c.Hash] = true
	}
	var out, boundary []*object.Commit
	inBoundary := map[plumbing.Hash]bool{}
	byHash := make(map[plumbing.Hash]*object.Commit, len(all))
	for _, c := range all {
		byHash[c.Hash] = c
	}
	for _, c := range all {
		if excluded[c.Hash] {
			continue
		}
		out = append(out, c)
		for _, p := range c.ParentHashes {
			if excluded[p] && !inBoundary[p] {
				inBoundary[p] = true
				boundary = append(boundary, byHash[p])
			}
		}
	}
	return append(out, boundary...), nil
}

// ancestry returns the commits reachable from tips (tips included), newest
// committer date first (`git rev-list`'s default order), or errIncomplete
// when a parent is missing (a shallow history).
func ancestry(r objectReader, tips ...*object.Commit) ([]*object.Commit, error) {
	seen := map[plumbing.Hash]bool{}
	var out []*object.Commit
	queue := append([]*object.Commit(nil), tips...)
	for _, c := range tips {
		seen[c.Hash] = true
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		out = append(out, c)
		for _, p := range c.ParentHashes {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := readCommit(r, p)
			if err != nil {
				return nil, err
			}
			queue = append(queue, pc)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Committer.When.After(out[j].Committer.When) })
	return out, nil
}

// isSeal reports a commit whose message holds the seal trailer, letter
// case aside (`git rev-list --grep=Argocd-gpg-seal: --regexp-ignore-case`).
func isSeal(c *object.Commit) bool {
	return strings.Contains(strings.ToLower(c.Message), strings.ToLower(source.SealTrailer))
}

// readCommit decodes commit h, or fails with errIncomplete.
func readCommit(r objectReader, h plumbing.Hash) (*object.Commit, error) {
	obj, err := r.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, errIncomplete)
	}
	c, err := decodeCommit(obj)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	return c, nil
}

// commitSignature checks c's signature.
func commitSignature(c *object.Commit, v source.SignatureVerifier) source.Signature {
	sig := source.Signature{Revision: c.Hash.String(), Date: c.Author.When, Name: c.Author.Name, Email: c.Author.Email}
	if c.PGPSignature == "" {
		sig.Result = source.SignatureUnsigned
		return sig
	}
	payload, err := withoutSignature(c.EncodeWithoutSignature)
	if err != nil {
		sig.Result = source.SignatureBad
		return sig
	}
	check := v.VerifySignature(payload, c.PGPSignature)
	sig.Result, sig.KeyID = check.Result, check.KeyID
	return sig
}

// tagSignature reads annotated tag h (named name) and checks its
// signature, or fails with errIncomplete.
func tagSignature(r objectReader, h plumbing.Hash, name string, v source.SignatureVerifier) (source.Signature, error) {
	obj, err := r.EncodedObject(plumbing.TagObject, h)
	if err != nil {
		return source.Signature{}, fmt.Errorf("tag %s: %w", name, errIncomplete)
	}
	t := &object.Tag{}
	if err := t.Decode(obj); err != nil {
		return source.Signature{}, fmt.Errorf("tag %s: %w", name, err)
	}
	sig := source.Signature{Revision: name, Tag: true, Date: t.Tagger.When, Name: t.Tagger.Name, Email: t.Tagger.Email}
	if t.PGPSignature == "" {
		sig.Result = source.SignatureUnsigned
		return sig, nil
	}
	payload, err := withoutSignature(t.EncodeWithoutSignature)
	if err != nil {
		sig.Result = source.SignatureBad
		return sig, nil
	}
	check := v.VerifySignature(payload, t.PGPSignature)
	sig.Result, sig.KeyID = check.Result, check.KeyID
	return sig, nil
}

// withoutSignature returns the bytes encode writes: a Git object as it
// was signed.
func withoutSignature(encode func(plumbing.EncodedObject) error) ([]byte, error) {
	o := &plumbing.MemoryObject{}
	if err := encode(o); err != nil {
		return nil, err
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}
