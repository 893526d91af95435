package git

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/integrity"
)

// signedHistory is a repository on a real Git server whose history a
// developer pushed with go-git: initial (unsigned, the server's), trusted
// (signed by the ring's key), outsider (signed by a key the ring does not
// hold), plain (unsigned), seal (signed, with the seal trailer) and top
// (signed); annotated tags v1 (signed) at top and v0 (unsigned) at plain.
type signedHistory struct {
	repo                                         source.Repository
	ring                                         *integrity.KeyRing
	signingKey                                   string // the ring key's signing subkey
	initial, trusted, outsider, plain, seal, top string
}

func newSignedHistory(t *testing.T) *signedHistory {
	t.Helper()
	opts := gitserver.DefaultOptions()
	opts.PushUsername, opts.PushPassword = "dev", "push-secret"
	gs, initial := testfiles.GitRepo(t, opts, "signed", fstest.MapFS{"app/cm.yaml": {Data: []byte("kind: ConfigMap\n")}})
	alice, mallory := testfiles.GPGKey(t, "alice", "alice@example.com"), testfiles.GPGKey(t, "mallory", "mallory@example.com")
	ring, err := integrity.ParseKeyRing(map[string]string{testfiles.GPGKeyID(alice): testfiles.GPGPublicKey(t, alice)})
	if err != nil {
		t.Fatal(err)
	}
	p := testfiles.NewGitPusher(t, gs.RepoURL("signed"), "dev", "push-secret")
	h := &signedHistory{repo: source.Repository{URL: gs.RepoURL("signed")}, ring: ring, initial: initial}
	h.trusted = p.Commit("trusted", map[string][]byte{"app/a.yaml": []byte("a: 1\n")}, "alice", alice)
	h.outsider = p.Commit("outsider", map[string][]byte{"app/b.yaml": []byte("b: 1\n")}, "mallory", mallory)
	h.plain = p.Commit("plain", map[string][]byte{"app/c.yaml": []byte("c: 1\n")}, "bob", nil)
	p.Tag("v0", "bob", nil)
	h.seal = p.Commit("reviewed everything so far\n\nArgocd-GPG-Seal: history reviewed by alice\n", nil, "alice", alice)
	h.top = p.Commit("top", map[string][]byte{"app/d.yaml": []byte("d: 1\n")}, "alice", alice)
	p.Tag("v1", "alice", alice)
	h.signingKey = alice.Subkeys[len(alice.Subkeys)-1].PublicKey.KeyIdString()
	return h
}

type sig struct {
	rev    string
	result source.SignatureResult
}

func summary(sigs []source.Signature) []sig {
	out := make([]sig, len(sigs))
	for i, s := range sigs {
		out[i] = sig{s.Revision, s.Result}
	}
	return out
}

// TestSignatures lists signatures as Argo CD's git client does: the commit
// alone (head), or its history back to the good seal commits (deep); an
// annotated tag's own signature first. Each is checked by the key ring:
// good, by a key it does not hold, or unsigned. The history is fetched on
// demand into a store that first held the commit alone.
func TestSignatures(t *testing.T) {
	h := newSignedHistory(t)
	s := newSource(t)
	ctx := context.Background()
	list := func(rev source.Revision, deep bool) []source.Signature {
		t.Helper()
		sigs, err := s.Signatures(ctx, h.repo, rev, source.SignatureRequest{Deep: deep, Verifier: h.ring})
		if err != nil {
			t.Fatalf("%v deep %v: %v", rev, deep, err)
		}
		return sigs
	}
	// A depth-1 snapshot first: the deep listings must deepen the store.
	snap, err := s.Snapshot(ctx, h.repo, source.Revision{Commit: h.top})
	if err != nil {
		t.Fatal(err)
	}
	_ = snap.(source.Closer).Close()

	head := list(source.Revision{Commit: h.top, Ref: "refs/heads/main"}, false)
	if len(head) != 1 || head[0].Revision != h.top || head[0].Result != source.SignatureGood || head[0].KeyID != h.signingKey ||
		head[0].Name != "alice" || head[0].Email != "alice@example.com" || head[0].Date.IsZero() {
		t.Errorf("head of main: %+v, want top signed by key %s", head, h.signingKey)
	}
	for _, c := range []struct {
		name string
		rev  source.Revision
		deep bool
		want []sig
	}{
		{"deep past a seal", source.Revision{Commit: h.top}, true, []sig{{h.top, source.SignatureGood}, {h.seal, source.SignatureGood}}},
		{"deep at a seal", source.Revision{Commit: h.seal}, true, []sig{{h.seal, source.SignatureGood}}},
		{"deep without a seal", source.Revision{Commit: h.plain}, true, []sig{
			{h.plain, source.SignatureUnsigned}, {h.outsider, source.SignatureMissingKey}, {h.trusted, source.SignatureGood}, {h.initial, source.SignatureUnsigned}}},
		{"signed annotated tag", source.Revision{Commit: h.top, Ref: "refs/tags/v1"}, false, []sig{{"v1", source.SignatureGood}}},
		{"signed annotated tag, deep", source.Revision{Commit: h.top, Ref: "refs/tags/v1"}, true, []sig{
			{"v1", source.SignatureGood}, {h.top, source.SignatureGood}, {h.seal, source.SignatureGood}}},
		{"unsigned annotated tag", source.Revision{Commit: h.plain, Ref: "refs/tags/v0"}, false, []sig{{"v0", source.SignatureUnsigned}}},
	} {
		got := summary(list(c.rev, c.deep))
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
	tag := list(source.Revision{Commit: h.top, Ref: "refs/tags/v1"}, false)[0]
	if !tag.Tag || tag.Name != "alice" || tag.KeyID != h.signingKey {
		t.Errorf("tag v1: %+v", tag)
	}
	outsider := list(source.Revision{Commit: h.outsider}, false)[0]
	if outsider.KeyID == "" || outsider.KeyID == h.signingKey {
		t.Errorf("a signature by a key not in the ring names key %q", outsider.KeyID)
	}

	// A seal commit that is not correctly signed does not stop the walk.
	all, err := s.Signatures(ctx, h.repo, source.Revision{Commit: h.top}, source.SignatureRequest{Deep: true, Verifier: &integrity.KeyRing{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 {
		t.Errorf("with no trusted key the seal does not stop the walk: %v", summary(all))
	}

	if _, err := s.Signatures(ctx, h.repo, source.Revision{Commit: "main"}, source.SignatureRequest{Verifier: h.ring}); err == nil ||
		!strings.Contains(err.Error(), "Resolve it first") {
		t.Errorf("a branch name: %v", err)
	}
}
