package git

import (
	"crypto/ed25519"
	"errors"
	"net"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// hostKeyAlgorithms returns the host key algorithms a client should offer
// to addr: those of the keys known_hosts holds for it (checked by cb), so
// that a server presenting several host keys (GitHub: ecdsa, ed25519, rsa)
// answers with one the client can verify, as OpenSSH and Argo CD's Git
// client choose. Without it, x/crypto offers its defaults in its own order
// and takes the server's first match: known_hosts holding only the server's
// ed25519 key then fails with "key mismatch" against its ecdsa key. Nil
// when known_hosts holds no key of addr (the handshake then says "key is
// unknown") or cb is not a known_hosts check.
func hostKeyAlgorithms(cb ssh.HostKeyCallback, addr string) []string {
	// A key no known_hosts holds: the check answers with the keys it
	// holds for addr.
	probe, err := ssh.NewPublicKey(ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)))
	if err != nil {
		return nil
	}
	var keyErr *knownhosts.KeyError
	if err := cb(addr, &net.TCPAddr{IP: net.IPv4zero}, probe); !errors.As(err, &keyErr) {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			algos = append(algos, a)
		}
	}
	for _, k := range keyErr.Want {
		switch t := k.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			// An RSA key signs with SHA-2 too; servers refuse SHA-1.
			add(ssh.KeyAlgoRSASHA512)
			add(ssh.KeyAlgoRSASHA256)
			add(ssh.KeyAlgoRSA)
		default:
			add(t)
		}
	}
	return algos
}
