package git

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/kubegitops/gitops/source"
)

// endpoint is a repository URL taken apart: the address without secrets,
// and the credentials (given or written into the URL) bound to it.
type endpoint struct {
	// url has no password; for http(s) no user either.
	url *url.URL
	// redacted is url as a string, safe for messages.
	redacted string
	// creds are nil for anonymous access.
	creds *source.Credentials
	// scopeURL is what Credentials.AppliesTo compares targets against.
	scopeURL string
}

// parseEndpoint validates repo and separates its secrets. scp-like
// addresses ("git@host:org/repo") become ssh URLs.
func parseEndpoint(repo source.Repository, policy *source.URLPolicy) (endpoint, error) {
	raw := strings.TrimSpace(repo.URL)
	if raw == "" {
		return endpoint{}, fmt.Errorf("empty URL: %w", source.ErrInvalidRepository)
	}
	tep, err := transport.NewEndpoint(raw)
	if err != nil {
		return endpoint{}, fmt.Errorf("unparsable URL: %w", source.ErrInvalidRepository)
	}
	u := &url.URL{Scheme: tep.Protocol, Host: tep.Host, Path: tep.Path}
	if tep.Port > 0 {
		u.Host = fmt.Sprintf("%s:%d", tep.Host, tep.Port)
	}
	if strings.Contains(tep.Host, ":") && tep.Port > 0 { // IPv6 literal
		u.Host = fmt.Sprintf("[%s]:%d", tep.Host, tep.Port)
	}
	creds := repo.Credentials
	if creds != nil && creds.Err != nil {
		// A repository Secret that cannot be used: refuse rather than read
		// anonymously or with part of its settings.
		return endpoint{}, creds.Err
	}
	switch u.Scheme {
	case "http", "https":
		if tep.User != "" || tep.Password != "" {
			if creds == nil {
				creds = &source.Credentials{Username: tep.User, Password: tep.Password}
			}
		}
	case "ssh":
		if tep.User != "" {
			u.User = url.User(tep.User)
		}
	case "file":
		if !strings.HasPrefix(raw, "file://") {
			// go-git reads a bare path as a file URL; the user wrote no
			// scheme, so do not say "scheme file".
			return endpoint{}, fmt.Errorf("%q is neither a Git URL (https://, http://, ssh://, git@host:path) nor an absolute folder: "+
				"a local folder is read only by an absolute path or a file:// URL: %w", raw, source.ErrInvalidRepository)
		}
		return endpoint{}, fmt.Errorf("scheme %q is not supported by the Git source (http, https, ssh); a folder is read by the local folder source, which takes absolute paths and file:// URLs: %w", u.Scheme, source.ErrInvalidRepository)
	default:
		return endpoint{}, fmt.Errorf("scheme %q is not supported (http, https, ssh): %w", u.Scheme, source.ErrInvalidRepository)
	}
	if u.Host == "" {
		return endpoint{}, fmt.Errorf("URL has no host: %w", source.ErrInvalidRepository)
	}
	if err := policy.CheckURL(u); err != nil {
		return endpoint{}, err
	}
	return endpoint{url: u, redacted: u.String(), creds: creds, scopeURL: u.String()}, nil
}

// storeKey names the object store and the ref cache entry of this
// endpoint: the address and a fingerprint of everything that decides
// access (credentials, known_hosts), so that a caller never reads refs or
// objects fetched under another identity or host-key policy. The secrets
// only enter a hash.
func (e endpoint) storeKey() string {
	h := sha256.New()
	h.Write([]byte(source.RepositoryKey(e.redacted)))
	h.Write([]byte{0})
	h.Write([]byte(e.url.Scheme))
	if c := e.creds; c != nil && c.CacheIdentity != "" {
		// A rotating token of one identity: one store for all its tokens.
		h.Write([]byte{0})
		h.Write([]byte(c.Identity()))
	} else if c != nil {
		insecure := []byte("strict")
		if c.InsecureIgnoreHostKey {
			insecure = []byte("insecure")
		}
		for _, part := range [][]byte{[]byte(c.Username), []byte(c.Password), []byte(c.BearerToken), c.SSHPrivateKey, []byte(c.Scope), c.KnownHosts, insecure} {
			h.Write([]byte{0})
			h.Write(part)
		}
		if c.InsecureSkipTLSVerify || c.ForceBasicAuth {
			// An unverified server's objects are never mixed with a
			// verified one's, and basic and bearer are two identities.
			h.Write([]byte{0})
			fmt.Fprintf(h, "insecure-tls=%t force-basic=%t", c.InsecureSkipTLSVerify, c.ForceBasicAuth)
		}
		if len(c.CAData)+len(c.TLSClientCertData)+len(c.TLSClientKeyData)+len(c.Proxy) > 0 {
			// Trust, client identity and the way out decide access too
			// (added only when set, so the keys of other credentials stay
			// as they were).
			for _, part := range [][]byte{[]byte("tls"), c.CAData, c.TLSClientCertData, c.TLSClientKeyData, []byte(c.Proxy), []byte(c.NoProxy)} {
				h.Write([]byte{0})
				h.Write(part)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// secrets lists the credential strings that must never appear in a
// message. Strings shorter than 3 bytes are left out: they cannot be told
// apart from ordinary text.
func (e endpoint) secrets() []string {
	c := e.creds
	if c == nil {
		return nil
	}
	var out []string
	for _, s := range []string{c.Password, c.BearerToken, c.SSHPassphrase, string(c.SSHPrivateKey), url.QueryEscape(c.Password), url.PathEscape(c.Password)} {
		if len(s) >= 3 {
			out = append(out, s)
		}
	}
	return out
}

// redact removes every secret of e from msg.
func (e endpoint) redact(msg string) string {
	for _, s := range e.secrets() {
		msg = strings.ReplaceAll(msg, s, "[redacted]")
	}
	return msg
}
