// Package gitserver runs a real Git smart-HTTP server on a loopback port,
// for the demo and for tests that must fetch through the network the way a
// user's engine does.
//
// The server is Debian's `git http-backend` run through Go's net/http/cgi:
// the protocol spoken is the one GitHub, GitLab and Gitea speak, not a
// reimplementation of it. Each repository is a bare repository under the
// server's folder, created from an fs.FS (CreateRepository); a private
// working clone next to it lets callers commit changes (Commit) that are
// pushed to the bare repository, so a fetch right after Commit sees them.
// By default the server serves fetches only (upload-pack); with
// Options.PushPassword it also accepts pushes authenticated with those
// basic credentials, and Commit then commits on whatever clients pushed.
//
// With Options.SSH the server also speaks Git over SSH on a second
// loopback port (golang.org/x/crypto/ssh), as GitHub's git@ endpoint does:
// fresh ed25519 and ecdsa host keys per server, as a real sshd offers
// several (SSHKnownHosts gives the ed25519 line only, SSHKnownHostsAll
// both), public-key authentication against the keys a test
// registers (AuthorizeSSHKey, NewSSHKey), and each exec request of
// git-upload-pack or git-receive-pack run as the real `git upload-pack` or
// `git receive-pack` on the bare repository, with the session as its
// standard streams and its exit status sent back. An authorized key may
// fetch and push.
//
// Every git command runs with a clean environment (no system or user
// configuration, a fixed author and committer) and under the caller's
// context, so a test never hangs on a stuck git process.
package gitserver
