package git

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/kubegitops/gitops/source"
)

// fetchedRefPrefix names the refs that remember fetched commits; they are
// offered as "haves" so the next fetch sends only new objects.
const fetchedRefPrefix = "refs/gitops/fetched/"

// maxHaves bounds the commits offered as haves in one fetch.
const maxHaves = 32

// unshallowDepth asks for the whole history (what `git fetch --unshallow`
// sends).
const unshallowDepth = 1<<31 - 1

// fetchCommit brings commit h into the store: only h, at the configured
// depth (fetchObjects). When the server does not advertise h and does not allow unadvertised
// wants, it falls back to the full history of every branch and tag.
// The caller holds the store's fetch slot.
func (s *Source) fetchCommit(ctx context.Context, e endpoint, o *objectStore, h plumbing.Hash) error {
	return s.fetchObjects(ctx, e, o, h, nil, s.opts.Depth)
}

// fetchObjects brings commit h into the store at depth, with the objects
// of also (annotated tags), as fetchCommit does. The caller holds the
// store's fetch slot.
func (s *Source) fetchObjects(ctx context.Context, e endpoint, o *objectStore, h plumbing.Hash, also []plumbing.Hash, depth int) error {
	if err := o.rotateIfFull(); err != nil {
		return err
	}
	g := o.current()
	sess, err := s.openSession(ctx, e)
	if err != nil {
		return err
	}
	defer func() { _ = sess.Close() }()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return err
	}
	st := g.openWriter()
	defer st.Close()

	wants := append([]plumbing.Hash{h}, also...)
	if !advertises(ar, h) && !ar.Capabilities.Supports(capability.AllowReachableSHA1InWant) &&
		!ar.Capabilities.Supports(capability.AllowTipSHA1InWant) {
		wants = append(advertisedTips(ar), also...)
		depth = unshallowDepth
		s.opts.Logger.V(1).Info("commit is not a branch or tag tip; fetching full history", "repository", e.redacted, "commit", h.String())
	}
	err = s.uploadPack(ctx, sess, ar, st, wants, depth, true)
	if errors.Is(err, errThinPackTooLarge) {
		// A big change: fetch it again as a plain pack, streamed to disk.
		s.opts.Logger.V(1).Info("incremental fetch too large for memory; fetching a full pack", "repository", e.redacted, "commit", h.String())
		retry, rerr := s.openSession(ctx, e)
		if rerr != nil {
			return rerr
		}
		_ = sess.Close()
		sess = retry
		if ar, err = sess.AdvertisedReferencesContext(ctx); err != nil {
			return err
		}
		err = s.uploadPack(ctx, sess, ar, st, wants, depth, false)
	}
	if err != nil {
		return err
	}
	g.packs++
	g.reindex() // the shared reader now sees the new pack
	if !g.hasCommit(h) {
		return fmt.Errorf("commit %s: %w", h, source.ErrRevisionNotFound)
	}
	return st.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(fetchedRefPrefix+h.String()), h))
}

// uploadPack runs one upload-pack exchange and stores the pack and the new
// shallow boundary.
// Offering haves (when incremental) asks for a thin pack; without, the
// server sends the whole tree of the wants at the depth.
func (s *Source) uploadPack(ctx context.Context, sess session, ar *packp.AdvRefs, st *filesystem.Storage, wants []plumbing.Hash, depth int, incremental bool) error {
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	req.Wants = wants
	shallows, err := st.Shallow()
	if err != nil {
		return err
	}
	if depth > 0 || len(shallows) > 0 {
		if !ar.Capabilities.Supports(capability.Shallow) {
			return errors.New("server does not support shallow fetches")
		}
		if err := req.Capabilities.Set(capability.Shallow); err != nil {
			return err
		}
	}
	if depth > 0 {
		req.Depth = packp.DepthCommits(depth)
	}
	req.Shallows = shallows
	if incremental {
		req.Haves = haves(st)
	}
	// With haves, ask for a thin pack: the server then sends only what
	// changed, as deltas against what we have (go-git's advertisement
	// filter hides the capability, but every git-upload-pack has it).
	thin := len(req.Haves) > 0
	if thin {
		if err := req.Capabilities.Set(capability.ThinPack); err != nil {
			return err
		}
	}
	if req.IsEmpty() {
		return nil
	}
	res, err := sess.UploadPack(ctx, req)
	if err != nil {
		if errors.Is(err, transport.ErrEmptyUploadPackRequest) {
			return nil
		}
		return err
	}
	defer res.Close()
	if thin {
		err = storeThinPack(st, demux(req.Capabilities, res), s.maxThinPackBytes)
	} else {
		err = packfile.UpdateObjectStorage(st, demux(req.Capabilities, res))
	}
	if err != nil {
		return err
	}
	// Only now that the objects are stored may the new commits count as
	// present-but-shallow.
	return updateShallow(st, shallows, res.ShallowUpdate)
}

// updateShallow records the new shallow boundary: what the server marked
// shallow, minus what it unshallowed.
func updateShallow(st *filesystem.Storage, before []plumbing.Hash, up packp.ShallowUpdate) error {
	if len(up.Shallows) == 0 && len(up.Unshallows) == 0 {
		return nil
	}
	set := map[plumbing.Hash]bool{}
	for _, h := range before {
		set[h] = true
	}
	for _, h := range up.Shallows {
		set[h] = true
	}
	for _, h := range up.Unshallows {
		delete(set, h)
	}
	out := make([]plumbing.Hash, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	return st.SetShallow(out)
}

// haves lists up to maxHaves previously fetched commits.
func haves(st *filesystem.Storage) []plumbing.Hash {
	iter, err := st.IterReferences()
	if err != nil {
		return nil
	}
	var out []plumbing.Hash
	_ = iter.ForEach(func(r *plumbing.Reference) error {
		if len(out) >= maxHaves {
			return storer.ErrStop
		}
		if r.Type() == plumbing.HashReference && len(r.Name()) > len(fetchedRefPrefix) &&
			string(r.Name()[:len(fetchedRefPrefix)]) == fetchedRefPrefix {
			out = append(out, r.Hash())
		}
		return nil
	})
	return out
}

func demux(caps *capability.List, r io.Reader) io.Reader {
	switch {
	case caps.Supports(capability.Sideband64k):
		return sideband.NewDemuxer(sideband.Sideband64k, r)
	case caps.Supports(capability.Sideband):
		return sideband.NewDemuxer(sideband.Sideband, r)
	}
	return r
}

func advertises(ar *packp.AdvRefs, h plumbing.Hash) bool {
	if ar.Head != nil && *ar.Head == h {
		return true
	}
	for _, v := range ar.References {
		if v == h {
			return true
		}
	}
	for _, v := range ar.Peeled {
		if v == h {
			return true
		}
	}
	return false
}

func advertisedTips(ar *packp.AdvRefs) []plumbing.Hash {
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	for name, h := range ar.References {
		if p, ok := ar.Peeled[name]; ok {
			h = p
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

func decodeCommit(obj plumbing.EncodedObject) (*object.Commit, error) {
	c := &object.Commit{}
	if err := c.Decode(obj); err != nil {
		return nil, err
	}
	return c, nil
}
