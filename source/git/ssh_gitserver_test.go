package git

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/source"
)

// sshGitServer starts internal/gitserver with its SSH side and one
// repository, "app", and returns it with the repository's first commit.
func sshGitServer(t *testing.T) (*gitserver.Server, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := gitserver.DefaultOptions()
	opts.SSH = true
	gs, err := gitserver.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gs.Close() })
	first, err := gs.CreateRepository(ctx, "app", fstest.MapFS{"deploy.yaml": {Data: []byte("kind: Deployment\n")}})
	if err != nil {
		t.Fatal(err)
	}
	return gs, first
}

// keyLines are the base64 lines of a PEM private key, none of which may
// appear in a message.
func keyLines(privatePEM []byte) []string {
	var out []string
	for _, l := range strings.Split(string(privatePEM), "\n") {
		if len(l) > 16 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// TestSSHKnownHostsAsArgoCD fetches from the real SSH Git server
// (internal/gitserver running git upload-pack) as Argo CD's repo server
// does with an sshPrivateKey Secret and argocd-ssh-known-hosts-cm: the
// server's known_hosts line lets it in; a known_hosts without it is
// refused with Argo CD's "knownhosts: key is unknown", naming the
// repository and the ConfigMap to add the host to; another key for the
// host is "knownhosts: key mismatch"; no known_hosts at all is refused
// before connecting, naming the ConfigMap; insecure (InsecureIgnoreHostKey)
// skips the check, even against a mismatching line; and a client key the
// server does not know is an authentication error that names the
// repository and quotes no key material.
func TestSSHKnownHostsAsArgoCD(t *testing.T) {
	gs, first := sshGitServer(t)
	ctx := context.Background()
	key, err := gs.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	url := gs.SSHRepoURL("app")
	known := []byte(gs.SSHKnownHosts() + "\n")
	// A known_hosts of other hosts only, as Argo CD's default ConfigMap.
	others := []byte("github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
	_, otherKey, err := gitserver.NewSSHKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	port := strings.TrimPrefix(gs.SSHAddr(), "127.0.0.1:")
	changed := []byte("[127.0.0.1]:" + port + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(otherKey))) + "\n")
	repo := func(privateKey, knownHosts []byte, insecure bool) source.Repository {
		return source.Repository{URL: url, Credentials: &source.Credentials{SSHPrivateKey: privateKey, KnownHosts: knownHosts, InsecureIgnoreHostKey: insecure}}
	}
	fetch := func(t *testing.T, r source.Repository) (source.Revision, error) {
		t.Helper()
		s := newSource(t)
		rev, err := s.Resolve(ctx, r, "main")
		if err != nil {
			return rev, err
		}
		snap, err := s.Snapshot(ctx, r, rev)
		if err != nil {
			return rev, err
		}
		if data, err := fs.ReadFile(snap, "deploy.yaml"); err != nil || string(data) != "kind: Deployment\n" {
			t.Errorf("deploy.yaml over ssh = %q, %v", data, err)
		}
		return rev, nil
	}
	refused := func(t *testing.T, err error, want ...string) {
		t.Helper()
		if !errors.Is(err, source.ErrAuthentication) {
			t.Fatalf("error = %v, want ErrAuthentication", err)
		}
		t.Log(err)
		for _, w := range append(want, url) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error does not say %q: %v", w, err)
			}
		}
		for _, l := range keyLines(key) {
			if strings.Contains(err.Error(), l) {
				t.Errorf("error quotes the private key: %v", err)
			}
		}
	}

	t.Run("known host", func(t *testing.T) {
		rev, err := fetch(t, repo(key, append(append([]byte{}, others...), known...), false))
		if err != nil || rev.Commit != first {
			t.Fatalf("fetch = %v, %v; want %s", rev, err, first)
		}
	})
	// The server presents an ed25519 and an ecdsa host key, as a real
	// sshd presents several: known_hosts holding either one, or both,
	// lets the client in (it offers the algorithms of the keys it holds).
	t.Run("known host by either of its keys", func(t *testing.T) {
		all := strings.Split(gs.SSHKnownHostsAll(), "\n")
		if len(all) != 2 || !strings.Contains(all[1], "ecdsa-sha2-nistp256") {
			t.Fatalf("SSHKnownHostsAll = %q, want an ed25519 and an ecdsa line", all)
		}
		for name, kh := range map[string]string{"ecdsa only": all[1], "both": all[0] + "\n" + all[1], "ed25519 only": all[0]} {
			if rev, err := fetch(t, repo(key, []byte(kh+"\n"), false)); err != nil || rev.Commit != first {
				t.Errorf("known_hosts with %s: %v, %v; want %s", name, rev, err, first)
			}
		}
	})
	t.Run("unknown host", func(t *testing.T) {
		_, err := fetch(t, repo(key, others, false))
		refused(t, err, "knownhosts: key is unknown", "argocd-ssh-known-hosts-cm", "127.0.0.1:"+port)
		// It names the key the server presented: either of its two.
		named := false
		for _, line := range strings.Split(gs.SSHKnownHostsAll(), "\n") {
			_, _, pub, _, _, perr := ssh.ParseKnownHosts([]byte(line))
			if perr != nil {
				t.Fatal(perr)
			}
			named = named || strings.Contains(err.Error(), ssh.FingerprintSHA256(pub))
		}
		if !named {
			t.Errorf("the refusal names neither host key's fingerprint: %v", err)
		}
	})
	t.Run("changed host key", func(t *testing.T) {
		_, err := fetch(t, repo(key, changed, false))
		refused(t, err, "knownhosts: key mismatch", "argocd-ssh-known-hosts-cm", ssh.FingerprintSHA256(gs.SSHHostKey()))
	})
	t.Run("no known_hosts", func(t *testing.T) {
		_, err := fetch(t, repo(key, nil, false))
		if !errors.Is(err, source.ErrInvalidRepository) || !strings.Contains(err.Error(), "argocd-ssh-known-hosts-cm") || !strings.Contains(err.Error(), url) {
			t.Errorf("no known_hosts: %v, want ErrInvalidRepository naming the repository and argocd-ssh-known-hosts-cm", err)
		}
	})
	t.Run("insecure", func(t *testing.T) {
		for name, kh := range map[string][]byte{"no known_hosts": nil, "changed host key": changed} {
			if rev, err := fetch(t, repo(key, kh, true)); err != nil || rev.Commit != first {
				t.Errorf("insecure with %s: %v, %v; want %s", name, rev, err, first)
			}
		}
	})
	t.Run("unknown client key", func(t *testing.T) {
		stranger, _, err := gitserver.NewSSHKeyPair()
		if err != nil {
			t.Fatal(err)
		}
		_, err = fetch(t, repo(stranger, known, false))
		refused(t, err, "unable to authenticate", "did not accept the SSH private key")
		for _, l := range keyLines(stranger) {
			if strings.Contains(err.Error(), l) {
				t.Errorf("error quotes the private key: %v", err)
			}
		}
	})
}

// TestSSHCommitPushesToGitserver: Commit pushes over SSH (git
// receive-pack of internal/gitserver) with host keys enforced; the server's
// branch is at the commit, a fresh fetch reads it, and a second commit
// builds on the first.
func TestSSHCommitPushesToGitserver(t *testing.T) {
	gs, first := sshGitServer(t)
	ctx := context.Background()
	key, err := gs.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	repo := source.Repository{URL: gs.SSHRepoURL("app"), Credentials: &source.Credentials{SSHPrivateKey: key, KnownHosts: []byte(gs.SSHKnownHosts())}}
	s := newSource(t)
	res, err := s.Commit(ctx, repo, CommitRequest{Base: "main", Edit: writeFile("values.yaml", "image: nginx:1.1\n"), Message: "bump", Author: testAuthor})
	if err != nil {
		t.Fatal(err)
	}
	if res.Base != first || res.Commit == "" {
		t.Fatalf("commit = %+v, want one on %s", res, first)
	}
	if head, err := gs.Head(ctx, "app"); err != nil || head != res.Commit {
		t.Fatalf("server head = %s, %v; want %s", head, err, res.Commit)
	}
	if data, rev := readAt(t, repo, "main", "values.yaml"); data != "image: nginx:1.1\n" || rev.Commit != res.Commit {
		t.Fatalf("read back %q at %s", data, rev.Commit)
	}
	res2, err := s.Commit(ctx, repo, CommitRequest{Base: "main", Edit: writeFile("values.yaml", "image: nginx:1.2\n"), Message: "bump 1.2", Author: testAuthor})
	if err != nil || res2.Base != res.Commit {
		t.Fatalf("second commit = %+v, %v; want one on %s", res2, err, res.Commit)
	}
	if parent, err := gs.Git(ctx, "app", "rev-parse", res2.Commit+"^"); err != nil || parent != res.Commit {
		t.Fatalf("parent of the second commit = %s, %v", parent, err)
	}
	if log, err := gs.Git(ctx, "app", "log", "--format=%an %s", "-1", "main"); err != nil || !bytes.Contains([]byte(log), []byte("updater bump 1.2")) {
		t.Fatalf("server log: %q, %v", log, err)
	}
}
