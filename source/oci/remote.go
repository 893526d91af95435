package oci

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/kubegitops/gitops/source"
)

// repository parses an oci:// repository URL into go-containerregistry's
// name ("registry/org/image"). Plain HTTP is decided by the transport,
// not by the name, so names are never marked insecure.
func repository(repo source.Repository) (name.Repository, error) {
	raw, ok := strings.CutPrefix(repo.URL, "oci://")
	if !ok {
		return name.Repository{}, fmt.Errorf("%w: an OCI source's URL starts with oci://", source.ErrInvalidRepository)
	}
	if strings.ContainsAny(raw, "@?#") || strings.Contains(raw, "://") {
		return name.Repository{}, fmt.Errorf("%w: not a registry repository", source.ErrInvalidRepository)
	}
	r, err := name.NewRepository(strings.TrimSuffix(raw, "/"), name.StrictValidation)
	if err != nil {
		return name.Repository{}, fmt.Errorf("%w: not a registry repository", source.ErrInvalidRepository)
	}
	return r, nil
}

// remoteOptions are the options of go-containerregistry's remote calls for
// one identity: its transport (TLS settings of creds, the URL policy,
// bounded bodies, plain HTTP only when allowed) and its authenticator.
func (s *Source) remoteOptions(ctx context.Context, creds *source.Credentials) ([]remote.Option, error) {
	tr, err := s.transport(creds)
	if err != nil {
		return nil, err
	}
	force := creds != nil && creds.InsecureOCIForceHTTP
	rt := &gate{next: tr, plainHTTP: s.opts.PlainHTTP || force, forceHTTP: force, policy: s.opts.Policy}
	auth := authn.Anonymous
	if creds != nil {
		switch {
		case creds.ForceBasicAuth && creds.Password != "":
			auth = &authn.Basic{Username: creds.Username, Password: creds.Password}
		case creds.BearerToken != "":
			auth = &authn.Bearer{Token: creds.BearerToken}
		case creds.Username != "" || creds.Password != "":
			auth = &authn.Basic{Username: creds.Username, Password: creds.Password}
		}
	}
	return []remote.Option{remote.WithContext(ctx), remote.WithTransport(rt), remote.WithAuth(auth),
		remote.WithRetryBackoff(remote.Backoff{Steps: 1})}, nil
}

// maxTransports bounds the HTTP transports kept, one per way of reaching
// registries (trust, client certificate, proxy).
const maxTransports = 32

// transport returns the HTTP transport of creds' TLS and proxy settings,
// kept and reused so that calls share connections (a transport per call
// would dial every time and leave its idle connections behind). Keys are
// hashes of those settings, never the settings themselves.
func (s *Source) transport(creds *source.Credentials) (*http.Transport, error) {
	key := transportKey(creds)
	s.mu.Lock()
	defer s.mu.Unlock()
	if tr, ok := s.transports[key]; ok {
		return tr, nil
	}
	tlsConfig, err := creds.TLSConfig()
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: s.opts.Timeout}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   s.opts.Timeout,
		ResponseHeaderTimeout: s.opts.Timeout,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
		DialContext:           dialer.DialContext,
	}
	if p := s.opts.Policy; p != nil {
		tr.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
			return p.DialContext(ctx, dialer, network, address)
		}
		tr.Proxy = nil // the environment's proxy would hide the address the policy must see
	}
	proxy, err := creds.ProxyFunc()
	if err != nil {
		return nil, err
	}
	if proxy != nil {
		tr.Proxy = proxy
	}
	if len(s.transports) >= maxTransports {
		for k, old := range s.transports { // any one out
			old.CloseIdleConnections()
			delete(s.transports, k)
			break
		}
	}
	s.transports[key] = tr
	return tr, nil
}

// transportKey hashes what decides a transport: trust, client identity,
// TLS verification and the way out.
func transportKey(c *source.Credentials) [sha256.Size]byte {
	h := sha256.New()
	if c != nil {
		for _, part := range [][]byte{c.CAData, c.TLSClientCertData, c.TLSClientKeyData, []byte(c.Proxy), []byte(c.NoProxy),
			[]byte(fmt.Sprint(c.InsecureSkipTLSVerify))} {
			h.Write([]byte{0})
			h.Write(part)
		}
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// gate checks every request URL (redirects included) against the policy
// and refuses plain HTTP unless allowed. go-containerregistry pings a
// loopback registry over HTTPS and HTTP at once; the gate keeps the HTTP
// one from succeeding for a registry that must be reached over HTTPS,
// and, where the credentials force HTTP (Argo CD's insecureOCIForceHttp),
// the HTTPS one from costing a TLS handshake with a server that speaks
// plain HTTP.
type gate struct {
	next      http.RoundTripper
	plainHTTP bool
	forceHTTP bool
	policy    *source.URLPolicy
}

// RoundTrip implements http.RoundTripper.
func (g *gate) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !g.plainHTTP {
		return nil, errPlainHTTPRefused
	}
	if req.URL.Scheme == "https" && g.forceHTTP {
		return nil, errHTTPSNotUsed
	}
	if err := g.policy.CheckURL(req.URL); err != nil {
		return nil, err
	}
	return g.next.RoundTrip(req)
}

var (
	errPlainHTTPRefused = errors.New("plain HTTP not allowed")
	errHTTPSNotUsed     = errors.New("HTTPS not used: the repository's insecureOCIForceHttp forces plain HTTP")
)

// limited reads at most max bytes of r and fails past them instead of
// truncating.
type limited struct {
	r    io.Reader
	left int64
	err  error
}

// Read implements io.Reader within the limit.
func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			return 0, l.err
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// classify maps a registry or transport error onto the source package's
// sentinels without quoting the registry's message (which may echo
// request headers).
func classify(err error) error {
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("%w: the registry refused the credentials", source.ErrAuthentication)
		case http.StatusNotFound:
			for _, d := range te.Errors {
				if d.Code == transport.NameUnknownErrorCode {
					return fmt.Errorf("%w: no such repository in the registry", source.ErrRepositoryNotFound)
				}
			}
			return fmt.Errorf("%w: no such tag or digest in the registry", source.ErrRevisionNotFound)
		}
		return fmt.Errorf("%w: the registry answered HTTP %d", source.ErrUnavailable, te.StatusCode)
	}
	msg := err.Error()
	var ne net.Error
	var ce *tls.CertificateVerificationError
	switch {
	case errors.Is(err, ErrArtifactTooLarge), errors.Is(err, source.ErrURLNotAllowed), errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &ce):
		return fmt.Errorf("%w: server certificate not trusted", source.ErrUnavailable)
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"), errors.Is(err, errPlainHTTPRefused):
		return ErrPlainHTTPRegistry
	case strings.Contains(msg, "UNAUTHORIZED") || strings.Contains(msg, "401 Unauthorized"):
		return fmt.Errorf("%w: the registry refused the credentials", source.ErrAuthentication)
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return source.ErrTimeout
	}
	return source.ErrUnavailable
}
