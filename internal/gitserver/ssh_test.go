package gitserver

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"golang.org/x/crypto/ssh"
)

// sshClient is OpenSSH's client set up as a user's: one private key, one
// known_hosts file, strict host key checking, no prompt.
type sshClient struct {
	key, knownHosts string
}

func newSSHClient(t *testing.T, privatePEM []byte, knownHosts string) sshClient {
	t.Helper()
	dir := t.TempDir()
	c := sshClient{key: filepath.Join(dir, "id_ed25519"), knownHosts: filepath.Join(dir, "known_hosts")}
	if err := os.WriteFile(c.key, privatePEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.knownHosts, []byte(knownHosts+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// command is GIT_SSH_COMMAND for this client.
func (c sshClient) command() string {
	return "ssh -F /dev/null -i " + c.key + " -o IdentitiesOnly=yes -o UserKnownHostsFile=" + c.knownHosts +
		" -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=20"
}

// git runs the git client in dir over this SSH client and returns its
// combined output and error.
func (c sshClient) git(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(), "GIT_TERMINAL_PROMPT=0", "GIT_SSH_COMMAND="+c.command())
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (c sshClient) mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := c.git(t, dir, args...)
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

func startSSHServer(t *testing.T) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := DefaultOptions()
	opts.SSH = true
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// OpenSSH's client and git clone, push and pull over the SSH side with an
// authorized key and the server's known_hosts line; Commit builds on the
// pushed commit and a pull over SSH sees it.
func TestSSHCloneAndPush(t *testing.T) {
	s := startSSHServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, err := s.CreateRepository(ctx, "demo", fstest.MapFS{"apps/cm.yaml": {Data: []byte("kind: ConfigMap\n")}})
	if err != nil {
		t.Fatal(err)
	}
	url := s.SSHRepoURL("demo")
	if want := "ssh://git@" + s.SSHAddr() + "/demo.git"; url != want || !strings.HasPrefix(s.SSHAddr(), "127.0.0.1:") {
		t.Fatalf("SSHRepoURL = %q, want %q on loopback", url, want)
	}
	kh := s.SSHKnownHosts()
	if !strings.HasPrefix(kh, "[127.0.0.1]:") || !strings.Contains(kh, " ssh-ed25519 AAAA") {
		t.Fatalf("SSHKnownHosts = %q", kh)
	}
	key, err := s.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	c := newSSHClient(t, key, kh)

	if ls := c.mustGit(t, "", "ls-remote", url); !strings.Contains(ls, first+"\trefs/heads/main") {
		t.Fatalf("ls-remote over ssh does not show main at %s:\n%s", first, ls)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	c.mustGit(t, "", "clone", "--quiet", url, clone)
	if data, err := os.ReadFile(filepath.Join(clone, "apps", "cm.yaml")); err != nil || string(data) != "kind: ConfigMap\n" {
		t.Fatalf("cloned file: %q, %v", data, err)
	}
	if err := os.WriteFile(filepath.Join(clone, "b"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.mustGit(t, clone, "add", "b")
	c.mustGit(t, clone, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "--quiet", "-m", "b")
	c.mustGit(t, clone, "push", "--quiet", "origin", "HEAD:main")
	pushed := c.mustGit(t, clone, "rev-parse", "HEAD")
	if head, err := s.Head(ctx, "demo"); err != nil || head != pushed {
		t.Fatalf("Head = %s, %v; pushed %s", head, err, pushed)
	}
	next, err := s.Commit(ctx, "demo", "c", map[string][]byte{"c": []byte("c")})
	if err != nil {
		t.Fatal(err)
	}
	c.mustGit(t, clone, "pull", "--quiet", "--ff-only", "origin", "main")
	if got := c.mustGit(t, clone, "rev-parse", "HEAD", "HEAD~1"); got != next+"\n"+pushed {
		t.Fatalf("after pull: %q, want %s then %s", got, next, pushed)
	}
	// The HTTP side serves the same repositories.
	if ls := gitClient(t, "", "ls-remote", s.RepoURL("demo")); !strings.Contains(ls, next+"\trefs/heads/main") {
		t.Fatalf("HTTP ls-remote after the SSH push:\n%s", ls)
	}
}

// A key the server was not given is refused at authentication, a
// known_hosts line of another key makes the client refuse the server, a
// missing repository and a command other than git's are refused with
// git's messages, and a server without Options.SSH says so.
func TestSSHRefusals(t *testing.T) {
	s := startSSHServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.CreateRepository(ctx, "demo", fstest.MapFS{"a": {Data: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	url := s.SSHRepoURL("demo")
	stranger, _, err := NewSSHKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := newSSHClient(t, stranger, s.SSHKnownHosts()).git(t, "", "ls-remote", url); err == nil || !strings.Contains(out, "Permission denied (publickey)") {
		t.Errorf("unauthorized key: %v\n%s", err, out)
	}
	key, err := s.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	_, otherHost, err := NewSSHKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	wrongHost := "[127.0.0.1]:" + strings.TrimPrefix(s.SSHAddr(), "127.0.0.1:") + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(otherHost)))
	if out, err := newSSHClient(t, key, wrongHost).git(t, "", "ls-remote", url); err == nil || !strings.Contains(out, "Host key verification failed") {
		t.Errorf("changed host key: %v\n%s", err, out)
	}
	c := newSSHClient(t, key, s.SSHKnownHosts())
	if out, err := c.git(t, "", "ls-remote", s.SSHRepoURL("missing")); err == nil || !strings.Contains(out, "does not appear to be a git repository") {
		t.Errorf("missing repository: %v\n%s", err, out)
	}
	if out, err := c.git(t, "", "ls-remote", "ssh://git@"+s.SSHAddr()+"/../demo.git"); err == nil || !strings.Contains(out, "does not appear to be a git repository") {
		t.Errorf("a path outside the repositories: %v\n%s", err, out)
	}
	// Another command: refused with exit status 128 (the session's
	// exit-status reached OpenSSH's client).
	cmd := exec.CommandContext(ctx, "ssh", append(strings.Fields(c.command())[1:], "-p", strings.TrimPrefix(s.SSHAddr(), "127.0.0.1:"), "git@127.0.0.1", "cat /etc/passwd")...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 128 || !strings.Contains(string(out), "git-upload-pack and git-receive-pack only") {
		t.Errorf("another command: %v\n%s", err, out)
	}

	plain := startServer(t)
	if plain.SSHRepoURL("demo") != "" || plain.SSHKnownHosts() != "" || plain.SSHHostKey() != nil {
		t.Error("a server without Options.SSH gives SSH addresses")
	}
	if _, err := plain.NewSSHKey(); err == nil || !strings.Contains(err.Error(), "Options.SSH") {
		t.Errorf("NewSSHKey without Options.SSH: %v", err)
	}
}

// Close returns while a client holds an SSH session open with git
// upload-pack waiting for its input: the server's context ends the git
// process and the connection.
func TestSSHCloseEndsSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := DefaultOptions()
	opts.SSH = true
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.CreateRepository(ctx, "demo", fstest.MapFS{"a": {Data: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	keyPEM, err := s.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	client, err := ssh.Dial("tcp", s.SSHAddr(), &ssh.ClientConfig{User: "git", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(s.SSHHostKey()), HostKeyAlgorithms: []string{s.SSHHostKey().Type()}, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Start("git-upload-pack '/demo.git'"); err != nil {
		t.Fatal(err)
	}
	// The advertisement's first bytes: upload-pack runs and waits for us.
	buf := make([]byte, 4)
	if _, err := stdout.Read(buf); err != nil {
		t.Fatalf("no advertisement: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("close: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Close did not return within 15s while a session was open")
	}
	if err := sess.Wait(); err == nil {
		t.Error("the session ended cleanly after Close")
	}
}
