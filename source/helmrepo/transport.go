package helmrepo

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/kubegitops/gitops/source"
)

// newHTTPClient returns the client of one identity: the system roots plus
// creds.CAData, creds' client certificate, the URL policy on every dial,
// opts.Timeout per request, and every response body bounded by maxBody
// (so that neither an index, an archive nor an OCI blob can exhaust
// memory, whatever size the server claims).
func newHTTPClient(opts Options, creds *source.Credentials, maxBody int64) (*http.Client, error) {
	tlsConfig, err := creds.TLSConfig()
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: opts.Timeout}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   opts.Timeout,
		ResponseHeaderTimeout: opts.Timeout,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	if opts.Policy != nil {
		tr.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
			return opts.Policy.DialContext(ctx, dialer, network, address)
		}
		tr.Proxy = nil // the environment's proxy would hide the address the policy must see
	} else {
		tr.DialContext = dialer.DialContext
	}
	proxy, err := creds.ProxyFunc()
	if err != nil {
		return nil, err
	}
	if proxy != nil {
		// The repository's own proxy: limitTransport still checks every
		// target URL, and the policy every dial (now to the proxy).
		tr.Proxy = proxy
	}
	return &http.Client{Timeout: opts.Timeout, Transport: &limitTransport{next: tr, max: maxBody, policy: opts.Policy}}, nil
}

// limitTransport checks every request URL (redirects included) against
// the policy and bounds every response body.
type limitTransport struct {
	next   http.RoundTripper
	max    int64
	policy *source.URLPolicy
}

// RoundTrip implements http.RoundTripper.
func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.policy.CheckURL(req.URL); err != nil {
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, fmt.Errorf("response of %d bytes: %w", resp.ContentLength, ErrArchiveTooLarge)
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max}
	return resp, nil
}

// limitedBody fails a read past its budget instead of truncating silently.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

// Read implements io.Reader within the limit.
func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, errTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

// Close implements io.Closer.
func (b *limitedBody) Close() error { return b.rc.Close() }

var errTooLarge = fmt.Errorf("response body: %w", ErrArchiveTooLarge)

// classify maps a transport error onto the source package's sentinels.
func classify(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, ErrArchiveTooLarge), errors.Is(err, source.ErrURLNotAllowed):
		return err
	case errors.As(err, &ne) && ne.Timeout():
		return source.ErrTimeout
	case errors.Is(err, context.DeadlineExceeded):
		return source.ErrTimeout
	case errors.Is(err, context.Canceled):
		return err
	}
	var ue *tls.CertificateVerificationError
	if errors.As(err, &ue) {
		return fmt.Errorf("%w: server certificate not trusted", source.ErrUnavailable)
	}
	return source.ErrUnavailable
}

// httpAuth is how creds authenticate over HTTP: "bearer", "basic" or
// "none". A bearer token wins over a user and password unless
// ForceBasicAuth is set with a password (Argo CD's forceHttpBasicAuth); an
// SSH key, which no chart repository takes, does not hide them.
func httpAuth(creds *source.Credentials) string {
	switch {
	case creds.ForceBasicAuth && creds.Password != "":
		return "basic"
	case creds.BearerToken != "":
		return "bearer"
	case creds.Username != "" || creds.Password != "":
		return "basic"
	}
	return "none"
}
