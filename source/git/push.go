package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/kubegitops/gitops/source"
)

// ErrBranchMoved is returned by Commit when the branch it builds on moved
// between the fetch and the push (someone else committed meanwhile). The
// caller starts over on the new head.
var ErrBranchMoved = errors.New("git: the branch moved before the push")

// ErrPushRejected is returned when the server refused a push for any reason
// other than a moved branch (a protected branch, a hook); the message
// carries the server's reason.
var ErrPushRejected = errors.New("git: push rejected")

// receiveSession is the part of a receive-pack session a push needs; go-git's
// HTTP transport and this package's SSH session implement it.
type receiveSession interface {
	AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error)
	ReceivePack(ctx context.Context, req *packp.ReferenceUpdateRequest) (*packp.ReportStatus, error)
	Close() error
}

// openReceiveSession connects to e's git-receive-pack: over this package's
// SSH transport (deadline-bound handshake, host keys enforced) or over the
// shared HTTP pool, whose dials and redirects the URL policy checks.
func (s *Source) openReceiveSession(ctx context.Context, e endpoint) (receiveSession, error) {
	if e.url.Scheme == "ssh" {
		return s.dialSSHService(ctx, e, "git-receive-pack")
	}
	t, tep, err := s.httpClient(e)
	if err != nil {
		return nil, err
	}
	return t.NewReceivePackSession(tep, nil)
}

// refUpdate moves one remote reference from old to new.
type refUpdate struct {
	name     plumbing.ReferenceName
	old, new plumbing.Hash
	force    bool
}

// push sends the given objects (the ones the remote lacks) as one pack and
// applies the updates, atomically when the server offers it. Unless an
// update is forced, its remote reference must still be at its old value
// (zero: must not exist), else ErrBranchMoved; the server re-checks this
// atomically.
func (s *Source) push(ctx context.Context, e endpoint, st storer.EncodedObjectStorer, objects []plumbing.Hash, updates ...refUpdate) error {
	sess, err := s.openReceiveSession(ctx, e)
	if err != nil {
		return err
	}
	defer func() { _ = sess.Close() }()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return err
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
	for _, up := range updates {
		current := ar.References[up.name.String()]
		if up.force {
			up.old = current
		} else if current != up.old {
			return fmt.Errorf("%s is at %s, not %s: %w", up.name.Short(), short(current), short(up.old), ErrBranchMoved)
		}
		req.Commands = append(req.Commands, &packp.Command{Name: up.name, Old: up.old, New: up.new})
	}
	if len(updates) > 1 && ar.Capabilities.Supports(capability.Atomic) {
		if err := req.Capabilities.Set(capability.Atomic); err != nil {
			return err
		}
	}
	var pack bytes.Buffer
	if _, err := packfile.NewEncoder(&pack, st, false).Encode(objects, 10); err != nil {
		return fmt.Errorf("packing %d objects: %w", len(objects), err)
	}
	req.Packfile = io.NopCloser(&pack)
	rs, err := sess.ReceivePack(ctx, req)
	if err == nil && rs != nil {
		err = rs.Error()
	}
	if err != nil {
		return classifyPushError(updates[0], err)
	}
	return nil
}

// classifyPushError tells a lost race from any other refusal.
func classifyPushError(up refUpdate, err error) error {
	if errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed) {
		return fmt.Errorf("push %s: %w", up.name.Short(), source.ErrAuthentication)
	}
	m := err.Error()
	for _, moved := range []string{"non-fast-forward", "fetch first", "failed to update ref", "cannot lock ref", "stale info", "failed to lock"} {
		if strings.Contains(m, moved) {
			return fmt.Errorf("push %s: %s: %w", up.name.Short(), m, ErrBranchMoved)
		}
	}
	if strings.Contains(m, "unpack") || strings.Contains(m, "ng ") || strings.Contains(m, "rejected") || strings.Contains(m, "error") {
		return fmt.Errorf("push %s: %s: %w", up.name.Short(), m, ErrPushRejected)
	}
	return fmt.Errorf("push %s: %w", up.name.Short(), err)
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "nothing"
	}
	return h.String()[:12]
}

// ReceivePack sends the reference update (commands and pack) to
// git-receive-pack and reads its report. Side-band is not requested, so
// the report arrives plain.
func (s *sshSession) ReceivePack(ctx context.Context, req *packp.ReferenceUpdateRequest) (*packp.ReportStatus, error) {
	if _, err := s.AdvertisedReferencesContext(ctx); err != nil {
		return nil, err
	}
	req.Capabilities.Delete(capability.Sideband64k)
	req.Capabilities.Delete(capability.Sideband)
	if err := req.Encode(s.stdin); err != nil {
		return nil, fmt.Errorf("sending update request: %w", err)
	}
	if err := s.stdin.Close(); err != nil {
		return nil, fmt.Errorf("closing input: %w", err)
	}
	if !req.Capabilities.Supports(capability.ReportStatus) {
		return nil, nil
	}
	rs := packp.NewReportStatus()
	if err := rs.Decode(io.LimitReader(s.stdout, maxAdvertisementBytes)); err != nil {
		if msg := strings.TrimSpace(s.stderr.String()); msg != "" {
			return nil, fmt.Errorf("reading push report: %v: %s", err, msg)
		}
		return nil, fmt.Errorf("reading push report: %w", err)
	}
	return rs, nil
}
