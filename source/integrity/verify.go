package integrity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/source"
)

// CheckGitGPG is the name of the GnuPG check of Git sources, Argo CD's.
const CheckGitGPG = "GIT/GPG"

// ErrCannotVerify is wrapped by the error of a source a policy selects
// whose Source cannot list signatures (not a source.SignatureSource: a
// local folder, a host's own source).
var ErrCannotVerify = errors.New("its source cannot list GnuPG signatures")

// Options configure a Verifier. Start from DefaultOptions.
type Options struct {
	// Listings is how many signature listings (one per repository,
	// revision, depth and key ring) are remembered. Default 1024.
	Listings int
}

// DefaultOptions remembers 1024 listings.
func DefaultOptions() Options { return Options{Listings: 1024} }

// Verifier verifies sources against a key ring that may be replaced while
// it serves (SetKeyRing). It is safe for concurrent use.
type Verifier struct {
	keys     atomic.Pointer[KeyRing]
	listings *lru.Cache[string, []source.Signature]
}

// NewVerifier returns a Verifier with an empty key ring.
func NewVerifier(opts Options) *Verifier {
	if opts.Listings <= 0 {
		opts.Listings = DefaultOptions().Listings
	}
	c, _ := lru.New[string, []source.Signature](opts.Listings) // a positive size never fails
	v := &Verifier{listings: c}
	v.keys.Store(&KeyRing{})
	return v
}

// SetKeyRing replaces the key ring (argocd-gpg-keys-cm changed); nil
// holds no key. Later verifications use it.
func (v *Verifier) SetKeyRing(k *KeyRing) {
	if k == nil {
		k = &KeyRing{}
	}
	v.keys.Store(k)
}

// KeyRing returns the key ring in use.
func (v *Verifier) KeyRing() *KeyRing { return v.keys.Load() }

// Input is one source of an app to verify.
type Input struct {
	// Label names the source in the problems of a multi-source app
	// (SourceLabel); empty for an app of one source.
	Label string
	// RepoURL is the repository URL as the app writes it, which policies
	// select.
	RepoURL string
	// Chart says the source is a Helm chart, which is never verified.
	Chart bool
	// Source reads the repository: a source.SignatureSource when a
	// policy selects it.
	Source source.Source
	// Repository and Revision are what the source reads: the resolved
	// revision, whose Ref says whether it is an annotated tag.
	Repository source.Repository
	Revision   source.Revision
}

// Request asks for the verification of an app's sources.
type Request struct {
	// Criteria are the project's (AppProject.EffectiveSourceIntegrity);
	// nil verifies nothing.
	Criteria *v1alpha1.SourceIntegrity
	// Sources are the app's sources, in order.
	Sources []Input
	// Fresh lists signatures again instead of using remembered listings
	// (a hard refresh).
	Fresh bool
}

// SourceLabel names source i (0-based) of n of an app, as Argo CD does in
// problems: "source <name>" when it has a name, else "source 2 of 3"; ""
// for an app of one source.
func SourceLabel(name string, i, n int) string {
	switch {
	case n <= 1:
		return ""
	case name != "":
		return "source " + name
	}
	return fmt.Sprintf("source %d of %d", i+1, n)
}

// Verify verifies each source a policy of req.Criteria selects. It
// returns nil and no error when no criteria apply; a Result with one
// CheckGitGPG check when some did (its Err says whether they passed); an
// error, naming the source, when they cannot be applied.
func (v *Verifier) Verify(ctx context.Context, req Request) (*Result, error) {
	var problems []string
	checked := false
	keys := v.keys.Load()
	for _, in := range req.Sources {
		if in.Chart {
			continue
		}
		pol, err := PolicyFor(req.Criteria, in.RepoURL)
		if err == nil && pol == nil {
			continue
		}
		if err == nil {
			var sigs []source.Signature
			sigs, err = v.list(ctx, in, pol.GPG.Mode == v1alpha1.SourceIntegrityGitPolicyGPGModeStrict, keys, req.Fresh)
			if err == nil {
				checked = true
				for _, p := range describeProblems(pol.GPG.Keys, keys, sigs) {
					problems = append(problems, labelled(in.Label, p))
				}
				continue
			}
		}
		return nil, errors.New(labelled(in.Label, err.Error()))
	}
	if !checked {
		return nil, nil
	}
	return &Result{Checks: []Check{{Name: CheckGitGPG, Problems: problems}}}, nil
}

// list returns the signatures of one source, remembered per repository,
// revision, depth and key ring.
func (v *Verifier) list(ctx context.Context, in Input, deep bool, keys *KeyRing, fresh bool) ([]source.Signature, error) {
	ss, ok := in.Source.(source.SignatureSource)
	if !ok {
		return nil, fmt.Errorf("repository %s cannot be verified: %w", source.RedactURL(in.RepoURL), ErrCannotVerify)
	}
	key := strings.Join([]string{source.RepositoryKey(in.RepoURL), in.Revision.Ref, in.Revision.Commit, fmt.Sprint(deep), keys.Digest()}, "\x00")
	if !fresh {
		if sigs, ok := v.listings.Get(key); ok {
			return sigs, nil
		}
	}
	sigs, err := ss.Signatures(ctx, in.Repository, in.Revision, source.SignatureRequest{Deep: deep, Verifier: keys})
	if err != nil {
		return nil, err
	}
	if len(sigs) == 0 {
		return nil, fmt.Errorf("no signatures listed for %s", in.Revision.Commit)
	}
	v.listings.Add(key, sigs)
	return sigs, nil
}

func labelled(label, msg string) string {
	if label == "" {
		return msg
	}
	return label + ": " + msg
}
