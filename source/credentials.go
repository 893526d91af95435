package source

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Credentials authenticate to a repository host (Git, a Helm chart
// repository or an OCI registry). Set either Username/Password
// (HTTPS basic; a personal access token goes in Password), BearerToken
// (HTTPS "Authorization: Bearer"), or SSHPrivateKey (SSH).
//
// Credentials never reveal their secrets through fmt, logr or encoding/json:
// String, GoString, Format, MarshalJSON and MarshalText all print a
// redacted summary.
type Credentials struct {
	// Username for HTTPS basic auth, or the SSH user when the URL has none.
	Username string
	// Password or token for HTTPS basic auth.
	Password string
	// BearerToken for HTTPS bearer auth (e.g. a GitHub App installation
	// token or a Bitbucket access token).
	BearerToken string
	// SSHPrivateKey is a PEM-encoded private key for SSH.
	SSHPrivateKey []byte
	// SSHPassphrase decrypts SSHPrivateKey when it is encrypted.
	SSHPassphrase string
	// KnownHosts is the known_hosts content the server's SSH host key must
	// match. SSH refuses to connect without it unless InsecureIgnoreHostKey.
	KnownHosts []byte
	// InsecureIgnoreHostKey accepts any SSH host key. For tests only.
	InsecureIgnoreHostKey bool
	// TLSClientCertData and TLSClientKeyData are a PEM client certificate
	// and its key, presented to HTTPS servers that ask for one (Argo CD's
	// tlsClientCertData / tlsClientCertKey).
	TLSClientCertData []byte
	TLSClientKeyData  []byte
	// CAData is a PEM bundle of certificate authorities trusted for this
	// repository's host, in addition to the system roots.
	CAData []byte
	// EnableOCI says the repository is an OCI registry of Helm charts even
	// though its URL has no oci:// scheme (Argo CD's enableOCI on a
	// repository of type helm).
	EnableOCI bool
	// InsecureOCIForceHTTP reaches the repository's OCI registry (Helm
	// OCI charts) over plain HTTP instead of HTTPS (Argo CD's
	// insecureOCIForceHttp). Credentials then travel in clear.
	InsecureOCIForceHTTP bool
	// InsecureSkipTLSVerify accepts any TLS server certificate of the
	// repository's host (Argo CD's insecure). The connection is encrypted
	// but not authenticated: credentials go to whoever answers.
	InsecureSkipTLSVerify bool
	// ForceBasicAuth sends Username and Password as HTTP basic auth even
	// when BearerToken is set (Argo CD's forceHttpBasicAuth, which skips
	// the negotiation of an auth method). Basic credentials are always
	// sent with the first request, never only after a 401 challenge, so a
	// server that answers anonymous clients with 404 or a redirect (as
	// GitHub and Bitbucket do for private repositories) is served whether
	// or not this is set.
	ForceBasicAuth bool
	// EnableLFS makes a Git snapshot hold the content of the Git LFS
	// objects its files point to, fetched from the repository's LFS
	// server with these credentials (Argo CD's enableLfs), instead of
	// the pointer files.
	EnableLFS bool
	// Err, when set, is why these credentials cannot be used: a
	// repository Secret applies to the repository but one of its fields
	// is malformed, or a token it names could not be obtained. Every
	// source refuses a fetch with them, with Err, rather than read the
	// repository anonymously or with part of its settings. It names the
	// Secret and the field, never a value.
	Err error
	// Proxy is the HTTP(S) proxy URL requests to this repository go
	// through (Argo CD's proxy), and NoProxy the comma-separated hosts,
	// domains and CIDRs that bypass it (Argo CD's noProxy). With a Proxy
	// the URL policy still checks every target URL, and every dial (to the
	// proxy). Empty Proxy: the environment's proxy when no URL policy is
	// set, else none.
	Proxy, NoProxy string
	// CacheIdentity, when set, stands for the secrets in the keys that
	// keep the caches of different identities apart (Identity, Git object
	// stores): for a token that rotates under one identity, such as a
	// GitHub App installation token ("github-app:<base>:<app>:<installation>"),
	// so that each new token does not start a cache of its own.
	CacheIdentity string
	// Scope is where the credentials may be sent: a URL prefix
	// ("https://git.example.com" or "https://git.example.com/team/"). Empty
	// means the exact scheme, host and port of the Repository URL. Hosts
	// are compared whole (never as substrings), so credentials scoped to
	// github.com are not sent to github.com.evil.example.
	Scope string
}

// Kind names the kind of credentials: "basic", "bearer", "ssh",
// "tls-client" (a client certificate only) or "none". A bearer token wins
// over a user and password unless ForceBasicAuth is set with a password.
func (c Credentials) Kind() string {
	switch {
	case len(c.SSHPrivateKey) > 0:
		return "ssh"
	case c.ForceBasicAuth && c.Password != "":
		return "basic"
	case c.BearerToken != "":
		return "bearer"
	case c.Username != "" || c.Password != "":
		return "basic"
	case len(c.TLSClientCertData) > 0:
		return "tls-client"
	}
	return "none"
}

// String returns a redacted summary such as "credentials(basic, user git)".
func (c Credentials) String() string {
	if c.Kind() == "none" {
		return "credentials(none)"
	}
	if c.Username != "" {
		return fmt.Sprintf("credentials(%s, user %s, redacted)", c.Kind(), c.Username)
	}
	return fmt.Sprintf("credentials(%s, redacted)", c.Kind())
}

// GoString implements fmt.GoStringer without secrets.
func (c Credentials) GoString() string { return c.String() }

// Format implements fmt.Formatter: every verb prints String.
func (c Credentials) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// MarshalJSON encodes only the kind and the user name, never a secret.
func (c Credentials) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"kind":%q,"username":%q,"redacted":true}`, c.Kind(), c.Username), nil
}

// MarshalText encodes String, so that text encoders (YAML, logfmt) print
// no secret either.
func (c Credentials) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// AppliesTo reports whether the credentials may be sent to target, given the
// repository URL they were configured for. The scheme, host and port must
// be equal (ports defaulted by scheme); when Scope carries a path, target's
// path must start with it at a segment boundary. Substring or suffix
// matches never count.
func (c Credentials) AppliesTo(repoURL, target string) bool {
	scope := c.Scope
	if scope == "" {
		scope = repoURL
	}
	s, err := parseScope(scope)
	if err != nil {
		return false
	}
	t, err := url.Parse(target)
	if err != nil || t.Host == "" {
		return false
	}
	if !strings.EqualFold(s.Scheme, t.Scheme) || !sameHostPort(s, t) {
		return false
	}
	if c.Scope == "" {
		return true // default scope: scheme and host only
	}
	prefix := strings.TrimSuffix(s.Path, "/")
	if prefix == "" {
		return true
	}
	return t.Path == prefix || strings.HasPrefix(t.Path, prefix+"/")
}

func parseScope(raw string) (*url.URL, error) {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		return u, nil
	}
	// scp-like user@host:path means ssh.
	if i := strings.IndexByte(raw, ':'); i > 0 && !strings.Contains(raw[:i], "/") {
		host := raw[:i]
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			host = host[at+1:]
		}
		return &url.URL{Scheme: "ssh", Host: host, Path: "/" + raw[i+1:]}, nil
	}
	return nil, fmt.Errorf("not a URL")
}

func sameHostPort(a, b *url.URL) bool {
	if !strings.EqualFold(a.Hostname(), b.Hostname()) {
		return false
	}
	pa, pb := a.Port(), b.Port()
	if pa == "" {
		pa = defaultPort(a.Scheme)
	}
	if pb == "" {
		pb = defaultPort(b.Scheme)
	}
	return pa == pb
}

func defaultPort(scheme string) string {
	switch strings.ToLower(scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	case "ssh":
		return "22"
	}
	return ""
}

// Identity returns a digest of everything in c that decides access (the
// secrets included, hashed, never in clear), for keeping apart the caches
// of different identities. It is "" for nil credentials.
func (c *Credentials) Identity() string { return c.identity() }

// identity returns a digest of everything in c that decides access, for
// keeping apart the work of different identities (never printed).
func (c *Credentials) identity() string {
	if c == nil {
		return ""
	}
	if c.CacheIdentity != "" {
		sum := sha256.Sum256([]byte("cache-identity\x00" + c.CacheIdentity + "\x00" + c.Scope + "\x00" + c.Proxy + "\x00" + string(c.CAData) + "\x00" + string(c.TLSClientCertData) +
			"\x00" + strconv.FormatBool(c.InsecureSkipTLSVerify) + strconv.FormatBool(c.EnableLFS)))
		return hex.EncodeToString(sum[:])
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(c.Username), []byte(c.Password), []byte(c.BearerToken), c.SSHPrivateKey,
		[]byte(c.SSHPassphrase), c.KnownHosts, []byte(c.Scope), []byte(strconv.FormatBool(c.InsecureIgnoreHostKey)),
		c.TLSClientCertData, c.TLSClientKeyData, c.CAData, []byte(strconv.FormatBool(c.EnableOCI)), []byte(strconv.FormatBool(c.InsecureOCIForceHTTP)), []byte(c.Proxy), []byte(c.NoProxy),
		[]byte(strconv.FormatBool(c.InsecureSkipTLSVerify)), []byte(strconv.FormatBool(c.ForceBasicAuth)), []byte(strconv.FormatBool(c.EnableLFS))} {
		h.Write([]byte(strconv.Itoa(len(part))))
		h.Write([]byte{0})
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TLSConfig returns the TLS client configuration of c: the system roots
// plus CAData, the client certificate of TLSClientCertData and
// TLSClientKeyData, and no verification of the server's certificate with
// InsecureSkipTLSVerify. It is nil (use the defaults) when c sets none of
// them. The error never quotes key material.
func (c *Credentials) TLSConfig() (*tls.Config, error) {
	if c == nil || (len(c.CAData) == 0 && len(c.TLSClientCertData) == 0 && !c.InsecureSkipTLSVerify) {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.InsecureSkipTLSVerify} //nolint:gosec // the repository's own insecure setting
	if len(c.CAData) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(c.CAData) {
			return nil, fmt.Errorf("CA data holds no PEM certificate: %w", ErrInvalidRepository)
		}
		cfg.RootCAs = pool
	}
	if len(c.TLSClientCertData) > 0 {
		cert, err := tls.X509KeyPair(c.TLSClientCertData, c.TLSClientKeyData)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate or key is not valid PEM: %w", ErrInvalidRepository)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// ProxyFunc returns the proxy selector of c's Proxy and NoProxy, or nil
// when c sets no proxy. NoProxy entries are "*" (every host), host names
// (matching the host and its subdomains; a leading "." is allowed), IP
// addresses and CIDR ranges, each optionally with ":port". Unlike the
// environment's proxy, loopback targets are proxied too unless NoProxy
// lists them. The error names no part of the proxy URL (it may hold a
// password).
func (c *Credentials) ProxyFunc() (func(*http.Request) (*url.URL, error), error) {
	if c == nil || c.Proxy == "" {
		return nil, nil
	}
	u, err := url.Parse(c.Proxy)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("proxy is not an http(s) URL: %w", ErrInvalidRepository)
	}
	var rules []string
	for _, r := range strings.Split(c.NoProxy, ",") {
		if r = strings.ToLower(strings.TrimSpace(r)); r != "" {
			rules = append(rules, r)
		}
	}
	return func(req *http.Request) (*url.URL, error) {
		if bypassProxy(rules, req.URL) {
			return nil, nil
		}
		return u, nil
	}, nil
}

// bypassProxy reports whether target matches a NoProxy rule.
func bypassProxy(rules []string, target *url.URL) bool {
	host, port := strings.ToLower(target.Hostname()), target.Port()
	if port == "" {
		port = defaultPort(target.Scheme)
	}
	ip, ipErr := netip.ParseAddr(host)
	for _, r := range rules {
		if r == "*" {
			return true
		}
		rhost, rport := r, ""
		if h, p, err := net.SplitHostPort(r); err == nil {
			rhost, rport = h, p
		}
		if rport != "" && rport != port {
			continue
		}
		if prefix, err := netip.ParsePrefix(rhost); err == nil {
			if ipErr == nil && prefix.Contains(ip) {
				return true
			}
			continue
		}
		if a, err := netip.ParseAddr(rhost); err == nil {
			if ipErr == nil && a == ip {
				return true
			}
			continue
		}
		rhost = strings.TrimPrefix(rhost, ".")
		if host == rhost || strings.HasSuffix(host, "."+rhost) {
			return true
		}
	}
	return false
}
