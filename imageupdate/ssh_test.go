package imageupdate

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/gitkit"
	"github.com/fluxcd/pkg/gittestserver"
	"golang.org/x/crypto/ssh"

	"github.com/kubegitops/gitops/source"
	gitsrc "github.com/kubegitops/gitops/source/git"
)

// sshRepo serves one repository holding files over fluxcd's SSH git server
// (gitkit runs the real git-upload-pack and git-receive-pack), accepting
// one client key. It returns the repository URL, the client's private key
// (PEM), the known_hosts line of the server and a function reading a file
// of the served main branch.
func sshRepo(t *testing.T, files map[string]string) (url string, key, knownHosts []byte, read func(p string) string) {
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
	authorized := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	srv := gittestserver.NewGitServer(t.TempDir()).Auth("git", "unused").KeyDir(t.TempDir())
	srv.PublicKeyLookupFunc(func(content string) (*gitkit.PublicKey, error) {
		if content != authorized {
			return nil, errors.New("unknown key")
		}
		return &gitkit.PublicKey{Id: "test"}, nil
	})
	if err := srv.ListenSSH(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.StartSSH() }()
	t.Cleanup(func() { _ = srv.StopSSH() })

	bare := filepath.Join(srv.Root(), "app.git")
	work := t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_NOSYSTEM=1", "HOME="+work)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(srv.Root(), "init", "-q", "--bare", "-b", "main", bare)
	git(work, "init", "-q", "-b", "main", ".")
	for p, c := range files {
		full := filepath.Join(work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(work, "add", "-A")
	git(work, "commit", "-q", "-m", "init")
	git(work, "push", "-q", bare, "main")

	var hostKey string
	addr := strings.TrimPrefix(srv.SSHAddress(), "ssh://git@")
	conn, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "probe", Auth: []ssh.AuthMethod{ssh.Password("x")},
		HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error {
			hostKey = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
			return errors.New("probed")
		}})
	if conn != nil {
		conn.Close()
	}
	if hostKey == "" {
		t.Fatalf("probing the host key: %v", err)
	}
	host, port, _ := strings.Cut(addr, ":")
	knownHosts = []byte(fmt.Sprintf("[%s]:%s %s\n", host, port, hostKey))
	read = func(p string) string {
		return git(bare, "show", "main:"+p)
	}
	return srv.SSHAddress() + "/app.git", pem.EncodeToMemory(block), knownHosts, read
}

// git:secret:ns/name with an sshPrivateKey pushes over SSH, the server's
// host key checked against the repository's known_hosts; the step after
// writes nothing; a wrong known_hosts line refuses before anything is
// sent; a URL policy that denies the host refuses the push.
func TestSSHWriteBackFromSecret(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	pushVersions(t, reg)
	url, key, knownHosts, read := sshRepo(t, map[string]string{"app/kustomization.yaml": kustomization, "app/deployment.yaml": "kind: Deployment\n"})
	opts := testOptions()
	opts.Secrets = func(_ context.Context, ns, name string) (map[string][]byte, error) {
		if ns != "argocd" || name != "git-ssh" {
			return nil, fmt.Errorf("no secret %s/%s", ns, name)
		}
		return map[string][]byte{"sshPrivateKey": key}, nil
	}
	annotations := ann("image-list", "web="+reg.host+"/team/app:~1.0", "web.kustomize.image-name", "app",
		"write-back-method", "git:secret:argocd/git-ssh", "write-back-target", "kustomization")
	app := kustomizeApp(reg, url, annotations)
	app.Credentials = &source.Credentials{KnownHosts: knownHosts}
	res, err := New(opts).Update(context.Background(), app)
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit == "" || res.Branch != "main" {
		t.Fatalf("result %+v, want a commit on main", res)
	}
	if got := read("app/kustomization.yaml"); !strings.Contains(got, "newTag: 1.0.1") {
		t.Fatalf("pushed kustomization:\n%s", got)
	}
	again, err := New(opts).Update(context.Background(), app)
	if err != nil || again.Commit != "" {
		t.Fatalf("second update = %+v, %v; want nothing written", again, err)
	}

	// known_hosts with another key for the same address refuses.
	_, otherPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherSigner, err := ssh.NewSignerFromKey(otherPriv)
	if err != nil {
		t.Fatal(err)
	}
	addrField := strings.Fields(string(knownHosts))[0]
	wrong := app
	wrong.Credentials = &source.Credentials{KnownHosts: []byte(addrField + " " + string(ssh.MarshalAuthorizedKey(otherSigner.PublicKey())))}
	if _, err := New(opts).Update(context.Background(), wrong); !errors.Is(err, ErrCredentials) {
		t.Fatalf("a wrong known_hosts line: %v, want ErrCredentials", err)
	}

	denied := opts
	src, err := gitsrc.New(func() gitsrc.Options {
		o := gitsrc.DefaultOptions()
		o.CacheDir = t.TempDir()
		o.Policy = &source.URLPolicy{DenyLoopback: true}
		return o
	}())
	if err != nil {
		t.Fatal(err)
	}
	denied.Git.Source = src
	if _, err := New(denied).Update(context.Background(), app); !errors.Is(err, ErrGit) || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("push through a denying URL policy: %v", err)
	}
}
