package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/kubegitops/gitops/source"
)

// sshSession speaks git-upload-pack over one SSH connection. It exists
// because go-git's SSH transport dials without a context and performs the
// SSH handshake with no deadline, so a server that accepts and never
// answers would hang it forever; here the connection carries the
// operation's deadline and is closed the moment the context ends.
type sshSession struct {
	client *ssh.Client
	sess   *ssh.Session
	stdin  io.WriteCloser
	stdout io.Reader
	stderr *boundedBuffer
	adv    *packp.AdvRefs
	stop   func() bool
}

// dialSSH connects, authenticates with the endpoint's key and verifies the
// host key against known_hosts (strict unless InsecureIgnoreHostKey), and
// starts git-upload-pack.
func (s *Source) dialSSH(ctx context.Context, e endpoint) (*sshSession, error) {
	return s.dialSSHService(ctx, e, "git-upload-pack")
}

// dialSSHService is dialSSH for any git service (git-upload-pack for
// fetches, git-receive-pack for pushes).
func (s *Source) dialSSHService(ctx context.Context, e endpoint, service string) (*sshSession, error) {
	c := e.creds
	if c == nil || c.Kind() != "ssh" {
		return nil, fmt.Errorf("ssh needs a private key: %w", source.ErrAuthentication)
	}
	if !c.AppliesTo(e.scopeURL, e.url.String()) {
		return nil, fmt.Errorf("credentials are scoped to another host: %w", source.ErrAuthentication)
	}
	var signer ssh.Signer
	var err error
	if c.SSHPassphrase != "" {
		signer, err = ssh.ParsePrivateKeyWithPassphrase(c.SSHPrivateKey, []byte(c.SSHPassphrase))
	} else {
		signer, err = ssh.ParsePrivateKey(c.SSHPrivateKey)
	}
	if err != nil {
		// The parser's message may quote key material; give none of it.
		return nil, fmt.Errorf("unreadable SSH private key: %w", source.ErrInvalidRepository)
	}
	hostKeys, err := hostKeyCallback(c)
	if err != nil {
		return nil, err
	}
	user := e.url.User.Username()
	if user == "" {
		user = c.Username
	}
	if user == "" {
		user = "git"
	}
	host := e.url.Hostname()
	port := e.url.Port()
	if port == "" {
		port = "22"
	}
	addr := net.JoinHostPort(host, port)
	conn, err := s.opts.Policy.DialContext(ctx, &net.Dialer{}, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	// The server's host key, for messages (the callback runs on the
	// handshake's goroutine).
	var presented atomic.Pointer[ssh.PublicKey]
	cfg := &ssh.ClientConfig{
		User: user,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: func(hostname string, remote net.Addr, key ssh.PublicKey) error {
			presented.Store(&key)
			return hostKeys(hostname, remote, key)
		},
	}
	if !c.InsecureIgnoreHostKey {
		cfg.HostKeyAlgorithms = hostKeyAlgorithms(hostKeys, addr)
	}
	cc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		stop()
		_ = conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var hostKey ssh.PublicKey
		if k := presented.Load(); k != nil {
			hostKey = *k
		}
		return nil, sshHandshakeError(addr, hostKey, err)
	}
	client := ssh.NewClient(cc, chans, reqs)
	out := &sshSession{client: client, stop: stop, stderr: &boundedBuffer{max: 4096}}
	if out.sess, err = client.NewSession(); err != nil {
		out.Close()
		return nil, err
	}
	if out.stdin, err = out.sess.StdinPipe(); err != nil {
		out.Close()
		return nil, err
	}
	if out.stdout, err = out.sess.StdoutPipe(); err != nil {
		out.Close()
		return nil, err
	}
	out.sess.Stderr = out.stderr
	if err := out.sess.Start(service + " " + shellQuote(e.url.Path)); err != nil {
		out.Close()
		return nil, err
	}
	return out, nil
}

// sshHandshakeError says why the SSH handshake with addr failed. Host
// key refusals keep the words of x/crypto's knownhosts ("knownhosts: key
// is unknown", "knownhosts: key mismatch"), which Argo CD users see, and
// say what to do; a refused client key keeps x/crypto's "unable to
// authenticate". Both are source.ErrAuthentication. None quotes key
// material: only the host key's type and SHA-256 fingerprint.
func sshHandshakeError(addr string, presented ssh.PublicKey, err error) error {
	var keyErr *knownhosts.KeyError
	var revoked *knownhosts.RevokedError
	hostKey := "no host key"
	if presented != nil {
		hostKey = presented.Type() + " " + ssh.FingerprintSHA256(presented)
	}
	switch {
	case errors.As(err, &keyErr) && len(keyErr.Want) == 0:
		return fmt.Errorf("ssh: handshake failed: knownhosts: key is unknown: no known_hosts line holds the host key of %s (%s); "+
			"add the server's key to known_hosts (Argo CD: argocd-ssh-known-hosts-cm): %w", addr, hostKey, source.ErrAuthentication)
	case errors.As(err, &keyErr):
		return fmt.Errorf("ssh: handshake failed: knownhosts: key mismatch: known_hosts holds another key for %s than the one it presented (%s); "+
			"if the server's key changed, replace its line in known_hosts (Argo CD: argocd-ssh-known-hosts-cm): %w", addr, hostKey, source.ErrAuthentication)
	case errors.As(err, &revoked):
		return fmt.Errorf("ssh: handshake failed: knownhosts: the host key of %s (%s) is revoked in known_hosts: %w", addr, hostKey, source.ErrAuthentication)
	case strings.Contains(err.Error(), "unable to authenticate"):
		return fmt.Errorf("ssh: handshake failed: %s: the server did not accept the SSH private key: %w",
			strings.TrimPrefix(err.Error(), "ssh: handshake failed: "), source.ErrAuthentication)
	case strings.Contains(err.Error(), "knownhosts") || strings.Contains(err.Error(), "host key"):
		return fmt.Errorf("host key of %s (%s) not accepted by known_hosts: %w", addr, hostKey, source.ErrAuthentication)
	}
	return err
}

// hostKeyCallback builds the host key check from the credentials.
func hostKeyCallback(c *source.Credentials) (ssh.HostKeyCallback, error) {
	if c.InsecureIgnoreHostKey {
		return ssh.InsecureIgnoreHostKey(), nil
	}
	if len(c.KnownHosts) == 0 {
		return nil, fmt.Errorf("ssh needs known_hosts (Argo CD: argocd-ssh-known-hosts-cm) or InsecureIgnoreHostKey (Argo CD: insecure): %w", source.ErrInvalidRepository)
	}
	// knownhosts reads files only; the file lives just long enough to be
	// parsed.
	f, err := os.CreateTemp("", "gitops-known-hosts-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(c.KnownHosts)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		return nil, errors.Join(werr, cerr)
	}
	cb, err := knownhosts.New(f.Name())
	if err != nil {
		return nil, fmt.Errorf("unreadable known_hosts: %w", source.ErrInvalidRepository)
	}
	return cb, nil
}

// AdvertisedReferencesContext reads the ref advertisement git-upload-pack
// sends first.
func (s *sshSession) AdvertisedReferencesContext(context.Context) (*packp.AdvRefs, error) {
	if s.adv != nil {
		return s.adv, nil
	}
	ar := packp.NewAdvRefs()
	if err := ar.Decode(io.LimitReader(s.stdout, maxAdvertisementBytes)); err != nil {
		if errors.Is(err, packp.ErrEmptyAdvRefs) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			msg := strings.ToLower(s.stderr.String())
			if strings.Contains(msg, "not found") || strings.Contains(msg, "does not") || strings.Contains(msg, "not a git repository") {
				return nil, transport.ErrRepositoryNotFound
			}
			if errors.Is(err, packp.ErrEmptyAdvRefs) {
				return nil, transport.ErrEmptyRemoteRepository
			}
		}
		return nil, err
	}
	if ar.IsEmpty() {
		return nil, transport.ErrEmptyRemoteRepository
	}
	transport.FilterUnsupportedCapabilities(ar.Capabilities)
	s.adv = ar
	return ar, nil
}

// UploadPack sends the wants, haves and shallows and returns the response
// whose reader yields the (possibly side-band multiplexed) pack.
func (s *sshSession) UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error) {
	if _, err := s.AdvertisedReferencesContext(ctx); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := req.UploadRequest.Encode(s.stdin); err != nil {
		return nil, fmt.Errorf("sending upload request: %w", err)
	}
	if err := req.UploadHaves.Encode(s.stdin, true); err != nil {
		return nil, fmt.Errorf("sending haves: %w", err)
	}
	if err := pktline.NewEncoder(s.stdin).Encodef("done\n"); err != nil {
		return nil, fmt.Errorf("sending done: %w", err)
	}
	if err := s.stdin.Close(); err != nil {
		return nil, fmt.Errorf("closing input: %w", err)
	}
	res := packp.NewUploadPackResponse(req)
	if err := res.Decode(io.NopCloser(s.stdout)); err != nil {
		return nil, fmt.Errorf("decoding upload-pack response: %w", err)
	}
	return res, nil
}

// Close ends the session and the connection.
func (s *sshSession) Close() error {
	if s.sess != nil {
		_ = s.sess.Close()
	}
	s.stop()
	return s.client.Close()
}

// shellQuote single-quotes a path for the remote shell, as git does.
func shellQuote(p string) string {
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// boundedBuffer keeps the first max bytes written to it (a server's
// stderr), discarding the rest.
type boundedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

// Write implements io.Writer.
func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

// String implements fmt.Stringer.
func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
