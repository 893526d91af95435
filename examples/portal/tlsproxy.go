package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	gosync "sync"
	"time"
)

// hstsValue is the Strict-Transport-Security of every answer over HTTPS.
const hstsValue = "max-age=31536000"

// certReloader serves a certificate pair read from files and read again
// when either file's modification time or size changes, so a renewed
// certificate is served without a restart.
type certReloader struct {
	certFile, keyFile string

	mu    gosync.Mutex
	cert  *tls.Certificate
	stamp [2]fileStamp
}

// fileStamp is what tells a file changed.
type fileStamp struct {
	mod  time.Time
	size int64
}

// newCertReloader reads the pair once; an unreadable or bad pair is an
// error naming the files.
func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	c := &certReloader{certFile: certFile, keyFile: keyFile}
	if _, err := c.current(); err != nil {
		return nil, err
	}
	return c, nil
}

// GetCertificate is tls.Config.GetCertificate: the current pair.
func (c *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.current()
}

// current returns the cached pair, reading the files again when they
// changed. A pair that fails to load while an older one is cached keeps
// the older one (a renewal caught halfway written) until the files change
// again.
func (c *certReloader) current() (*tls.Certificate, error) {
	var stamp [2]fileStamp
	for i, f := range []string{c.certFile, c.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return c.cachedOr(fmt.Errorf("tls: %w", err))
		}
		stamp[i] = fileStamp{mod: st.ModTime(), size: st.Size()}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil && stamp == c.stamp {
		return c.cert, nil
	}
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		if c.cert != nil {
			return c.cert, nil
		}
		return nil, fmt.Errorf("tls: --tls-cert %s, --tls-key %s: %w", c.certFile, c.keyFile, err)
	}
	c.cert, c.stamp = &pair, stamp
	return c.cert, nil
}

func (c *certReloader) cachedOr(err error) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil {
		return c.cert, nil
	}
	return nil, err
}

// tlsConfig is the listener's configuration: TLS 1.2 or later, the
// reloader's certificate.
func (c *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.GetCertificate}
}

// parseTrustedProxies reads "-trusted-proxies": CIDRs or addresses,
// comma-separated.
func parseTrustedProxies(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxies: %q is neither a CIDR nor an IP address", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// trusted reports whether addr (host:port or host) is a trusted proxy.
func (s *server) trusted(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range s.opts.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwarded applies X-Forwarded-For and -Host when the peer is a trusted
// proxy (RemoteAddr becomes the nearest address the trusted proxies did
// not add, Host the forwarded host), and drops every X-Forwarded-* header
// otherwise, so nothing after it reads a header a client made up. It
// returns whether the request reached the user's side over HTTPS: TLS to
// this server, or a trusted proxy saying X-Forwarded-Proto https.
func (s *server) forwarded(r *http.Request) (*http.Request, bool) {
	if !s.trusted(r.RemoteAddr) {
		r.Header.Del("X-Forwarded-Proto")
		r.Header.Del("X-Forwarded-For")
		r.Header.Del("X-Forwarded-Host")
		return r, r.TLS != nil
	}
	proto := lastListValue(r.Header.Values("X-Forwarded-Proto"))
	https := r.TLS != nil || strings.EqualFold(proto, "https")
	r2 := r.Clone(r.Context())
	if host := lastListValue(r.Header.Values("X-Forwarded-Host")); host != "" {
		r2.Host = host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if hop == "" {
			continue
		}
		r2.RemoteAddr = net.JoinHostPort(hop, "0")
		if !s.trusted(hop) {
			break
		}
	}
	return r2, https
}

// lastListValue is the last element of a comma-separated header (the one
// the nearest proxy added).
func lastListValue(values []string) string {
	if len(values) == 0 {
		return ""
	}
	parts := strings.Split(values[len(values)-1], ",")
	return strings.TrimSpace(parts[len(parts)-1])
}

type httpsKey struct{}

// isHTTPS reports whether r reached the user's side over HTTPS (see
// forwarded); cookies are Secure then.
func isHTTPS(r *http.Request) bool {
	v, _ := r.Context().Value(httpsKey{}).(bool)
	return v
}

// tlsListener wraps ln to serve TLS with the pair of certFile and keyFile,
// re-read when the files change (certReloader).
func tlsListener(ln net.Listener, certFile, keyFile string) (net.Listener, error) {
	c, err := newCertReloader(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return tls.NewListener(ln, c.tlsConfig()), nil
}
