package gitserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshHandshakeTimeout bounds a client's SSH handshake (key exchange and
// authentication), so a client that connects and stays silent holds
// nothing.
const sshHandshakeTimeout = 10 * time.Second

// sshServer is the SSH side of a Server (Options.SSH).
type sshServer struct {
	ln      net.Listener
	hostKey ssh.Signer
	// ecdsaKey is the second host key (ecdsa-sha2-nistp256).
	ecdsaKey ssh.Signer
	cfg      *ssh.ServerConfig
	// ctx bounds every git process the SSH side runs; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	keys   map[string]bool // authorized client keys, wire format
	conns  map[net.Conn]struct{}
	closed bool
}

// startSSH listens on a loopback port with fresh ed25519 and ecdsa host keys and
// serves Git over SSH until Close.
func (s *Server) startSSH(ctx context.Context) error {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("gitserver: ssh host key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return fmt.Errorf("gitserver: ssh host key: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("gitserver: ssh listen: %w", err)
	}
	x := &sshServer{ln: ln, hostKey: signer, keys: map[string]bool{}, conns: map[net.Conn]struct{}{}}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	x.cfg = &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			x.mu.Lock()
			ok := x.keys[string(key.Marshal())]
			x.mu.Unlock()
			if !ok {
				return nil, errors.New("gitserver: public key not authorized")
			}
			return &ssh.Permissions{}, nil
		},
	}
	x.cfg.AddHostKey(signer)
	// A second host key of another type, as a real sshd offers several
	// (GitHub: ecdsa, ed25519, rsa): a client must pick the one its
	// known_hosts holds, not the first its defaults prefer.
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("gitserver: ssh host key: %w", err)
	}
	ecSigner, err := ssh.NewSignerFromKey(ecKey)
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("gitserver: ssh host key: %w", err)
	}
	x.cfg.AddHostKey(ecSigner)
	x.ecdsaKey = ecSigner
	s.ssh = x
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		s.acceptSSH()
	}()
	return nil
}

// acceptSSH serves each connection until the listener closes.
func (s *Server) acceptSSH() {
	x := s.ssh
	for {
		conn, err := x.ln.Accept()
		if err != nil {
			return
		}
		x.mu.Lock()
		if x.closed {
			x.mu.Unlock()
			_ = conn.Close()
			return
		}
		x.conns[conn] = struct{}{}
		x.wg.Add(1)
		x.mu.Unlock()
		go func() {
			defer x.wg.Done()
			defer func() {
				x.mu.Lock()
				delete(x.conns, conn)
				x.mu.Unlock()
				_ = conn.Close()
			}()
			s.serveSSHConn(conn)
		}()
	}
}

// serveSSHConn runs the handshake (refusing keys not authorized) and
// serves the connection's sessions.
func (s *Server) serveSSHConn(conn net.Conn) {
	x := s.ssh
	_ = conn.SetDeadline(time.Now().Add(sshHandshakeTimeout))
	sc, chans, reqs, err := ssh.NewServerConn(conn, x.cfg)
	if err != nil {
		return
	}
	_ = conn.SetDeadline(time.Time{})
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	var sessions sync.WaitGroup
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session channels are served")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			s.serveSSHSession(ch, creqs)
		}()
	}
	sessions.Wait()
}

// serveSSHSession answers a session's requests: GIT_PROTOCOL through
// "env", then one "exec" of git-upload-pack or git-receive-pack. Shells,
// terminals and other commands are refused.
func (s *Server) serveSSHSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	var env []string
	for req := range reqs {
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			ok := ssh.Unmarshal(req.Payload, &kv) == nil && kv.Name == "GIT_PROTOCOL"
			if ok {
				env = append(env, "GIT_PROTOCOL="+kv.Value)
			}
			_ = req.Reply(ok, nil)
		case "exec":
			var p struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &p); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
			go func() { // later requests (keepalives) get a refusal
				for r := range reqs {
					if r.WantReply {
						_ = r.Reply(false, nil)
					}
				}
			}()
			status := s.runSSHCommand(ch, p.Command, env)
			_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
			return
		default:
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
	}
}

// runSSHCommand runs the git service command names on its repository,
// with the channel as standard input, output and error, and returns its
// exit status.
func (s *Server) runSSHCommand(ch ssh.Channel, command string, env []string) uint32 {
	service, bare, err := s.sshTarget(command)
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "fatal: %v\n", err)
		return 128
	}
	cmd := exec.CommandContext(s.ssh.ctx, s.git, service, bare)
	cmd.Dir = bare
	cmd.Env = append([]string{
		"HOME=" + s.home,
		"PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
	}, env...)
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "fatal: %v\n", err)
		return 128
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(ch.Stderr(), "fatal: %v\n", err)
		return 128
	}
	go func() {
		_, _ = io.Copy(stdin, ch)
		_ = stdin.Close()
	}()
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			return uint32(exit.ExitCode())
		}
		return 128
	}
	return 0
}

// sshTarget reads an exec request's command, "git-upload-pack '/name.git'"
// (or "git upload-pack ..." or git-receive-pack), as the git client sends
// it, into the git subcommand and the bare repository's folder.
func (s *Server) sshTarget(command string) (service, bare string, err error) {
	verb, arg, _ := strings.Cut(strings.TrimSpace(command), " ")
	if verb == "git" {
		verb, arg, _ = strings.Cut(strings.TrimSpace(arg), " ")
		verb = "git-" + verb
	}
	switch verb {
	case "git-upload-pack", "git-receive-pack":
	default:
		return "", "", fmt.Errorf("gitserver serves git-upload-pack and git-receive-pack only, not %q", verb)
	}
	p := strings.TrimSpace(arg)
	if len(p) >= 2 && p[0] == '\'' && p[len(p)-1] == '\'' {
		p = p[1 : len(p)-1]
	}
	name := strings.TrimSuffix(strings.TrimPrefix(p, "/"), ".git")
	bare = filepath.Join(s.dir, "repos", name+".git")
	if !repoName.MatchString(name) {
		return "", "", fmt.Errorf("'%s' does not appear to be a git repository", p)
	}
	if _, err := os.Stat(bare); err != nil {
		return "", "", fmt.Errorf("'%s' does not appear to be a git repository", p)
	}
	return strings.TrimPrefix(verb, "git-"), bare, nil
}

// AuthorizeSSHKey lets clients holding key's private half fetch and push
// over SSH (Options.SSH). Other keys are refused at authentication.
func (s *Server) AuthorizeSSHKey(key ssh.PublicKey) error {
	if s.ssh == nil {
		return errors.New("gitserver: SSH is not served (Options.SSH)")
	}
	s.ssh.mu.Lock()
	defer s.ssh.mu.Unlock()
	s.ssh.keys[string(key.Marshal())] = true
	return nil
}

// NewSSHKey makes a fresh ed25519 client key, authorizes its public half
// (AuthorizeSSHKey) and returns the private key as an OpenSSH PEM block,
// the form a repository Secret's sshPrivateKey holds.
func (s *Server) NewSSHKey() ([]byte, error) {
	pem, pub, err := NewSSHKeyPair()
	if err != nil {
		return nil, err
	}
	if err := s.AuthorizeSSHKey(pub); err != nil {
		return nil, err
	}
	return pem, nil
}

// NewSSHKeyPair makes a fresh ed25519 key that no server authorizes: its
// private key as an OpenSSH PEM block and its public key.
func NewSSHKeyPair() ([]byte, ssh.PublicKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("gitserver: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "gitserver client")
	if err != nil {
		return nil, nil, fmt.Errorf("gitserver: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, fmt.Errorf("gitserver: %w", err)
	}
	return pem.EncodeToMemory(block), signer.PublicKey(), nil
}

// SSHAddr returns the SSH listener's address ("127.0.0.1:PORT"), or ""
// when SSH is not served.
func (s *Server) SSHAddr() string {
	if s.ssh == nil {
		return ""
	}
	return s.ssh.ln.Addr().String()
}

// SSHRepoURL returns the SSH clone URL of a repository,
// ssh://git@127.0.0.1:PORT/name.git, or "" when SSH is not served.
func (s *Server) SSHRepoURL(name string) string {
	if s.ssh == nil {
		return ""
	}
	return "ssh://git@" + s.SSHAddr() + "/" + name + ".git"
}

// SSHHostKey returns the server's public host key, or nil when SSH is not
// served.
func (s *Server) SSHHostKey() ssh.PublicKey {
	if s.ssh == nil {
		return nil
	}
	return s.ssh.hostKey.PublicKey()
}

// SSHKnownHosts returns the known_hosts line of the server's host key,
// "[127.0.0.1]:PORT ssh-ed25519 AAAA...", without a newline, or "" when
// SSH is not served.
func (s *Server) SSHKnownHosts() string {
	if s.ssh == nil {
		return ""
	}
	return knownhosts.Line([]string{s.SSHAddr()}, s.SSHHostKey())
}

// SSHKnownHostsAll returns the known_hosts lines of both host keys the
// server presents (ssh-ed25519 and ecdsa-sha2-nistp256), joined by a
// newline, or "" when SSH is not served. SSHKnownHosts holds only the
// first: a client given it must still connect.
func (s *Server) SSHKnownHostsAll() string {
	if s.ssh == nil {
		return ""
	}
	return s.SSHKnownHosts() + "\n" + knownhosts.Line([]string{s.SSHAddr()}, s.ssh.ecdsaKey.PublicKey())
}

// closeSSH stops accepting, ends every git process and connection, and
// waits for them.
func (s *Server) closeSSH() error {
	x := s.ssh
	if x == nil {
		return nil
	}
	err := x.ln.Close()
	x.cancel()
	x.mu.Lock()
	x.closed = true
	for c := range x.conns {
		_ = c.Close()
	}
	x.mu.Unlock()
	x.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
