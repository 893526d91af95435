package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/kubegitops/gitops/source"
)

// maxErrorBody bounds how much of a non-2xx response body is read: go-git
// reads it whole to build its error, and a hostile server could send
// gigabytes.
const maxErrorBody = 64 << 10

// maxAdvertisementBytes bounds the ref advertisement read from a server:
// a hostile server could otherwise stream refs until memory runs out.
const maxAdvertisementBytes = 256 << 20

// maxRedirects bounds the redirects followed on the discovery request.
const maxRedirects = 5

// newHTTPTransport returns the connection pool shared by all repositories
// of a Source. Every dial goes through the URL policy (so a host name that
// resolves to a refused address is caught), and a server that accepts a
// connection but never answers hits ResponseHeaderTimeout.
func newHTTPTransport(opts Options) *http.Transport {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	policy := opts.Policy
	t := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return policy.DialContext(ctx, dialer, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: opts.Timeout,
		ExpectContinueTimeout: time.Second,
	}
	if policy == nil {
		// With a policy, a proxy would make the dial check look at the
		// proxy's address instead of the repository's.
		t.Proxy = http.ProxyFromEnvironment
	}
	return t
}

// authRoundTripper adds credentials to a request only when its URL is in
// the credentials' scope. It is the only place credentials are attached,
// so a redirect to another host, scheme or port, or any request go-git
// makes on its own, goes out anonymous.
type authRoundTripper struct {
	base     http.RoundTripper
	creds    *source.Credentials
	scopeURL string
}

// RoundTrip implements http.RoundTripper.
func (a *authRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Del("Authorization")
	setAuthorization(req, a.creds, a.scopeURL)
	res, err := a.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case res.Body == nil:
	case res.StatusCode >= 300:
		res.Body = limitedBody{Reader: io.LimitReader(res.Body, maxErrorBody), Closer: res.Body}
	case strings.HasSuffix(req.URL.Path, "/info/refs"):
		res.Body = limitedBody{Reader: io.LimitReader(res.Body, maxAdvertisementBytes), Closer: res.Body}
	}
	return res, nil
}

// setAuthorization sets the Authorization header of creds on req when
// req's URL is in their scope (scopeURL, see source.Credentials.AppliesTo):
// a bearer token, or basic credentials (also when a bearer token is set,
// with ForceBasicAuth), always on the first request, never waiting for a
// challenge.
func setAuthorization(req *http.Request, creds *source.Credentials, scopeURL string) {
	if creds == nil || !creds.AppliesTo(scopeURL, req.URL.String()) {
		return
	}
	switch creds.Kind() {
	case "bearer":
		req.Header.Set("Authorization", "Bearer "+creds.BearerToken)
	case "basic":
		req.SetBasicAuth(creds.Username, creds.Password)
	}
}

type limitedBody struct {
	io.Reader
	io.Closer
}

// newHTTPSession opens a go-git upload-pack session over the shared pool.
// go-git never sees the credentials; authRoundTripper adds them per
// request.
func (s *Source) newHTTPSession(e endpoint) (session, error) {
	t, tep, err := s.httpClient(e)
	if err != nil {
		return nil, err
	}
	return t.NewUploadPackSession(tep, nil)
}

// httpClient is go-git's smart-HTTP transport over the shared pool, with
// e's credentials added per request and every redirect checked by the URL
// policy; it serves fetches and pushes alike.
func (s *Source) httpClient(e endpoint) (transport.Transport, *transport.Endpoint, error) {
	if e.creds != nil && e.creds.Kind() == "ssh" {
		return nil, nil, fmt.Errorf("an SSH key cannot authenticate to an %s URL: %w", e.url.Scheme, source.ErrInvalidRepository)
	}
	policy := s.opts.Policy
	base, err := s.transportFor(e.creds)
	if err != nil {
		return nil, nil, err
	}
	client := &http.Client{
		Transport: &authRoundTripper{base: base, creds: e.creds, scopeURL: e.scopeURL},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return errors.New("too many redirects")
			}
			return policy.CheckURL(req.URL)
		},
	}
	t := githttp.NewClientWithOptions(client, &githttp.ClientOptions{RedirectPolicy: githttp.FollowInitialRedirects})
	tep, err := transport.NewEndpoint(e.url.String())
	if err != nil {
		return nil, nil, fmt.Errorf("unparsable URL: %w", source.ErrInvalidRepository)
	}
	return t, tep, nil
}

// transportFor returns the shared pool, or, for credentials with a CA
// bundle, a client certificate or a proxy, a pool of their own (a clone of
// the shared one with their TLS configuration and proxy), kept for the
// Source's life.
func (s *Source) transportFor(c *source.Credentials) (*http.Transport, error) {
	cfg, err := c.TLSConfig()
	if err != nil {
		return nil, err
	}
	proxy, err := c.ProxyFunc()
	if err != nil {
		return nil, err
	}
	if cfg == nil && proxy == nil {
		return s.httpTransport, nil
	}
	id := c.Identity()
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tlsTransports[id]; ok {
		return t, nil
	}
	t := s.httpTransport.Clone()
	if cfg != nil {
		t.TLSClientConfig = cfg
	}
	if proxy != nil {
		// The policy still checks the target (endpoint and redirects) and
		// every dial, which now goes to the proxy.
		t.Proxy = proxy
	}
	s.tlsTransports[id] = t
	return t, nil
}
