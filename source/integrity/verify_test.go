package integrity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/internal/testfiles"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/dir"
	"github.com/kubegitops/gitops/source/git"
)

// counting passes Signatures to the real Git source and counts the calls.
type counting struct {
	*git.Source
	calls atomic.Int32
}

func (c *counting) Signatures(ctx context.Context, repo source.Repository, rev source.Revision, req source.SignatureRequest) ([]source.Signature, error) {
	c.calls.Add(1)
	return c.Source.Signatures(ctx, repo, rev, req)
}

// world is a repository a developer pushed to a real Git server: initial
// (the server's, unsigned), then commits signed by alice (in the key ring
// and the policy), mallory (in the key ring only), trent (in the policy
// only) and one unsigned by bob.
type world struct {
	url                                            string
	src                                            *counting
	ring                                           *KeyRing
	alice, mallory, trent                          *openpgp.Entity
	initial, byAlice, byMallory, byTrent, unsigned string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	opts := gitserver.DefaultOptions()
	opts.PushUsername, opts.PushPassword = "dev", "push-secret"
	opts.AuthorName, opts.AuthorEmail = "server", "server@example.com"
	gs, initial := testfiles.GitRepo(t, opts, "app", fstest.MapFS{"cm.yaml": {Data: []byte("kind: ConfigMap\n")}})
	w := &world{url: gs.RepoURL("app"), initial: initial,
		alice: testfiles.GPGKey(t, "alice", "alice@example.com"), mallory: testfiles.GPGKey(t, "mallory", "mallory@example.com"),
		trent: testfiles.GPGKey(t, "trent", "trent@example.com")}
	var err error
	w.ring, err = ParseKeyRing(map[string]string{
		testfiles.GPGKeyID(w.alice): testfiles.GPGPublicKey(t, w.alice), testfiles.GPGKeyID(w.mallory): testfiles.GPGPublicKey(t, w.mallory)})
	if err != nil {
		t.Fatal(err)
	}
	p := testfiles.NewGitPusher(t, w.url, "dev", "push-secret")
	w.byAlice = p.Commit("a", map[string][]byte{"a.yaml": []byte("a: 1\n")}, "alice", w.alice)
	w.byMallory = p.Commit("m", map[string][]byte{"m.yaml": []byte("m: 1\n")}, "mallory", w.mallory)
	w.byTrent = p.Commit("t", map[string][]byte{"t.yaml": []byte("t: 1\n")}, "trent", w.trent)
	w.unsigned = p.Commit("u", map[string][]byte{"u.yaml": []byte("u: 1\n")}, "bob", nil)
	gopts := git.DefaultOptions()
	gopts.CacheDir = t.TempDir()
	g, err := git.New(gopts)
	if err != nil {
		t.Fatal(err)
	}
	w.src = &counting{Source: g}
	return w
}

func subkey(e *openpgp.Entity) string { return e.Subkeys[len(e.Subkeys)-1].PublicKey.KeyIdString() }

func (w *world) input(commit string) Input {
	return Input{RepoURL: w.url, Source: w.src, Repository: source.Repository{URL: w.url}, Revision: source.Revision{Commit: commit, Ref: "refs/heads/main"}}
}

func criteria(mode v1alpha1.SourceIntegrityGitPolicyGPGMode, keys []string, repos ...string) *v1alpha1.SourceIntegrity {
	pol := v1alpha1.SourceIntegrityGitPolicy{GPG: &v1alpha1.SourceIntegrityGitPolicyGPG{Mode: mode, Keys: keys}}
	for _, r := range repos {
		pol.Repos = append(pol.Repos, v1alpha1.SourceIntegrityGitPolicyRepo{URL: r})
	}
	return &v1alpha1.SourceIntegrity{Git: &v1alpha1.SourceIntegrityGit{Policies: []v1alpha1.SourceIntegrityGitPolicy{pol}}}
}

// TestVerifyHead verifies the synced commit (mode head) and says what is
// wrong in Argo CD's words: unsigned, signed by a key the policy does not
// list, signed by a key argocd-gpg-keys-cm does not hold; a commit signed
// by a listed key (its primary key's ID or its fingerprint) passes.
func TestVerifyHead(t *testing.T) {
	w := newWorld(t)
	v := NewVerifier(DefaultOptions())
	v.SetKeyRing(w.ring)
	keys := []string{testfiles.GPGKeyID(w.alice), fmt.Sprintf("%X", w.trent.PrimaryKey.Fingerprint)}
	si := criteria(v1alpha1.SourceIntegrityGitPolicyGPGModeHead, keys, "http://*", "!https://elsewhere/*")
	ctx := context.Background()
	want := map[string]string{
		w.byAlice:   "",
		w.unsigned:  fmt.Sprintf("GIT/GPG: Failed verifying revision %s by 'bob <bob@example.com>': unsigned (key_id=)", w.unsigned),
		w.byMallory: fmt.Sprintf("GIT/GPG: Failed verifying revision %s by 'mallory <mallory@example.com>': signed with unallowed key (key_id=%s)", w.byMallory, subkey(w.mallory)),
		w.byTrent:   fmt.Sprintf("GIT/GPG: Failed verifying revision %s by 'trent <trent@example.com>': signed with key not in keyring (key_id=%s)", w.byTrent, subkey(w.trent)),
	}
	for commit, msg := range want {
		res, err := v.Verify(ctx, Request{Criteria: si, Sources: []Input{w.input(commit)}})
		if err != nil || res == nil || len(res.Checks) != 1 || res.Checks[0].Name != CheckGitGPG {
			t.Fatalf("%s: %+v %v", commit, res, err)
		}
		got := ""
		if err := res.Err(); err != nil {
			got = err.Error()
			var ie *Error
			if !errors.As(err, &ie) {
				t.Errorf("%s: %T is not an *Error", commit, err)
			}
		}
		if got != msg {
			t.Errorf("%s:\n got %q\nwant %q", commit, got, msg)
		}
	}
	// Not selected, mode none, a chart: nothing verified.
	for name, req := range map[string]Request{
		"no criteria":    {Sources: []Input{w.input(w.unsigned)}},
		"not selected":   {Criteria: criteria(v1alpha1.SourceIntegrityGitPolicyGPGModeHead, keys, "https://github.com/*"), Sources: []Input{w.input(w.unsigned)}},
		"excluded":       {Criteria: criteria(v1alpha1.SourceIntegrityGitPolicyGPGModeHead, keys, "*", "!"+w.url), Sources: []Input{w.input(w.unsigned)}},
		"mode none":      {Criteria: criteria(v1alpha1.SourceIntegrityGitPolicyGPGModeNone, keys, "*"), Sources: []Input{w.input(w.unsigned)}},
		"a chart source": {Criteria: si, Sources: []Input{{RepoURL: w.url, Chart: true}}},
	} {
		if res, err := v.Verify(ctx, req); res != nil || err != nil {
			t.Errorf("%s: %+v %v, want nothing verified", name, res, err)
		}
	}
}

// TestVerifyStrictAndSources: strict mode reports every problem of the
// history (one per key); each source of a multi-source app is named;
// criteria that cannot apply are errors naming the source.
func TestVerifyStrictAndSources(t *testing.T) {
	w := newWorld(t)
	v := NewVerifier(DefaultOptions())
	v.SetKeyRing(w.ring)
	ctx := context.Background()
	si := criteria(v1alpha1.SourceIntegrityGitPolicyGPGModeStrict, []string{testfiles.GPGKeyID(w.alice)}, "*")
	res, err := v.Verify(ctx, Request{Criteria: si, Sources: []Input{w.input(w.unsigned)}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Checks[0].Problems
	want := []string{w.unsigned + " by 'bob", w.byTrent + " by 'trent", w.byMallory + " by 'mallory", w.initial + " by 'server"}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want one for each of %v", got, want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("problem %d %q, want %q", i, got[i], want[i])
		}
	}

	second := w.input(w.byAlice)
	second.Label = SourceLabel("", 1, 2)
	named := w.input(w.unsigned)
	named.Label = SourceLabel("values", 0, 2)
	head := criteria(v1alpha1.SourceIntegrityGitPolicyGPGModeHead, []string{testfiles.GPGKeyID(w.alice)}, "*")
	res, err = v.Verify(ctx, Request{Criteria: head, Sources: []Input{named, second}})
	if err != nil {
		t.Fatal(err)
	}
	if msg := res.Err().Error(); !strings.HasPrefix(msg, "GIT/GPG: source values: Failed verifying revision "+w.unsigned) || strings.Contains(msg, "\n") {
		t.Errorf("multi-source: %q", msg)
	}
	second.Revision.Commit = w.byMallory
	res, _ = v.Verify(ctx, Request{Criteria: head, Sources: []Input{named, second}})
	if lines := strings.Split(res.Err().Error(), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "GIT/GPG: source 2 of 2: Failed verifying revision "+w.byMallory) {
		t.Errorf("two failing sources: %q", lines)
	}

	two := criteria(v1alpha1.SourceIntegrityGitPolicyGPGModeHead, nil, "*")
	two.Git.Policies = append(two.Git.Policies, two.Git.Policies[0])
	local := Input{Label: "source 1 of 2", RepoURL: "file:///srv/app", Source: dir.New(dir.DefaultOptions())}
	for name, c := range map[string]struct {
		req  Request
		want string
	}{
		"two policies":   {Request{Criteria: two, Sources: []Input{w.input(w.byAlice)}}, "multiple (2) git source integrity policies found for repo URL: " + w.url},
		"unknown mode":   {Request{Criteria: criteria("always", nil, "*"), Sources: []Input{w.input(w.byAlice)}}, `unknown GPG mode "always" configured for GIT source integrity`},
		"a local folder": {Request{Criteria: head, Sources: []Input{local}}, "source 1 of 2: repository file:///srv/app cannot be verified: its source cannot list GnuPG signatures"},
	} {
		if _, err := v.Verify(ctx, c.req); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// TestVerifyRemembersListings: a listing is remembered for its repository,
// revision, depth and key ring; a fresh request or another key ring lists
// again.
func TestVerifyRemembersListings(t *testing.T) {
	w := newWorld(t)
	v := NewVerifier(DefaultOptions())
	v.SetKeyRing(w.ring)
	ctx := context.Background()
	si := criteria(v1alpha1.SourceIntegrityGitPolicyGPGModeHead, []string{testfiles.GPGKeyID(w.alice), testfiles.GPGKeyID(w.mallory)}, "*")
	req := Request{Criteria: si, Sources: []Input{w.input(w.byMallory)}}
	for i, step := range []struct {
		do    func()
		calls int32
		ok    bool
	}{
		{func() {}, 1, true},
		{func() {}, 1, true},
		{func() { req.Fresh = true }, 2, true},
		{func() { req.Fresh = false; v.SetKeyRing(nil) }, 3, false}, // mallory's key went from argocd-gpg-keys-cm
		{func() {}, 3, false},
	} {
		step.do()
		res, err := v.Verify(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.src.calls.Load(); got != step.calls || (res.Err() == nil) != step.ok {
			t.Errorf("step %d: %d listings, verdict %v; want %d listings, passing %v", i, got, res.Err(), step.calls, step.ok)
		}
	}
}
