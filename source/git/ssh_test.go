package git

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"testing"

	"github.com/fluxcd/gitkit"
	"github.com/fluxcd/pkg/gittestserver"
	"golang.org/x/crypto/ssh"

	"github.com/kubegitops/gitops/source"
)

type sshKey struct {
	private    []byte
	authorized string
}

func newSSHKey(t testing.TB) sshKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "test")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return sshKey{private: pem.EncodeToMemory(block), authorized: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))}
}

// TestSSHKeyAuthWithKnownHosts runs fluxcd's gittestserver SSH server
// (gitkit, which runs the real git-upload-pack) accepting one client key.
func TestSSHKeyAuthWithKnownHosts(t *testing.T) {
	key := newSSHKey(t)
	srv := gittestserver.NewGitServer(t.TempDir()).Auth("git", "unused").KeyDir(t.TempDir())
	srv.PublicKeyLookupFunc(func(content string) (*gitkit.PublicKey, error) {
		if content != key.authorized {
			return nil, errors.New("unknown key")
		}
		return &gitkit.PublicKey{Id: "test"}, nil
	})
	if err := srv.ListenSSH(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.StartSSH() }()
	t.Cleanup(func() { _ = srv.StopSSH() })

	w := newWorkRepo(t, srv.Root(), "app")
	w.write(map[string]string{"deploy.yaml": "kind: Deployment\n"})
	commit := w.commit("one")
	w.git("tag", "-a", "v1.0.0", "-m", "release")
	w.publish()

	hostKey := readHostKey(t, srv)
	addr := strings.TrimPrefix(srv.SSHAddress(), "ssh://git@")
	host, port, _ := strings.Cut(addr, ":")
	knownHosts := []byte(fmt.Sprintf("[%s]:%s %s\n", host, port, hostKey))
	url := srv.SSHAddress() + "/app.git"
	s := newSource(t)
	ctx := context.Background()

	repo := source.Repository{URL: url, Credentials: &source.Credentials{SSHPrivateKey: key.private, KnownHosts: knownHosts}}
	rev, err := s.Resolve(ctx, repo, "v1.0.0")
	if err != nil || rev.Commit != commit || rev.Ref != "refs/tags/v1.0.0" {
		t.Fatalf("resolve over ssh = %v, %v; want refs/tags/v1.0.0@%s", rev, err, commit)
	}
	snap, err := s.Snapshot(ctx, repo, rev)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := fs.ReadFile(snap, "deploy.yaml"); err != nil || string(data) != "kind: Deployment\n" {
		t.Fatalf("ReadFile over ssh = %q, %v", data, err)
	}

	// Strict host key checking: a known_hosts line with another key refuses.
	other := newSSHKey(t)
	wrong := source.Repository{URL: url, Credentials: &source.Credentials{SSHPrivateKey: key.private,
		KnownHosts: []byte(fmt.Sprintf("[%s]:%s %s\n", host, port, other.authorized))}}
	if _, err := s.Resolve(ctx, wrong, "main"); !errors.Is(err, source.ErrAuthentication) {
		t.Errorf("wrong host key: error = %v, want ErrAuthentication", err)
	}
	// No known_hosts at all refuses before connecting.
	none := source.Repository{URL: url, Credentials: &source.Credentials{SSHPrivateKey: key.private}}
	if _, err := s.Resolve(ctx, none, "main"); !errors.Is(err, source.ErrInvalidRepository) {
		t.Errorf("missing known_hosts: error = %v, want ErrInvalidRepository", err)
	}
	// A key the server does not know is refused.
	stranger := source.Repository{URL: url, Credentials: &source.Credentials{SSHPrivateKey: other.private, KnownHosts: knownHosts}}
	if _, err := s.Resolve(ctx, stranger, "main"); !errors.Is(err, source.ErrAuthentication) {
		t.Errorf("unknown client key: error = %v, want ErrAuthentication", err)
	}
}

// readHostKey returns the server's public host key in authorized_keys form.
func readHostKey(t testing.TB, srv *gittestserver.GitServer) string {
	t.Helper()
	conn, err := ssh.Dial("tcp", strings.TrimPrefix(srv.SSHAddress(), "ssh://git@"), &ssh.ClientConfig{
		User: "probe",
		Auth: []ssh.AuthMethod{ssh.Password("x")},
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			return &hostKeyFound{key: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))}
		},
	})
	if conn != nil {
		conn.Close()
	}
	var found *hostKeyFound
	if !errors.As(err, &found) {
		t.Fatalf("probing host key: %v", err)
	}
	return found.key
}

type hostKeyFound struct{ key string }

func (h *hostKeyFound) Error() string { return "host key found" }
