package argocdcm

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// retryWaitMax is the longest wait before a retry (Argo CD's
// retryWaitMax).
const retryWaitMax = 10 * time.Second

// RESTConfig returns a copy of cfg with the Kubernetes client settings of
// argocd-cmd-params-cm, as Argo CD's application controller applies them
// to its clients: controller.k8s.client.qps and .burst; the transport's
// controller.k8s.tcp.timeout, .tcp.keepalive, .tls.handshake.timeout,
// .tcp.idle.timeout and .client.max.idle.connections; and
// controller.k8sclient.retry.max retries of a request that failed
// transiently (a network error, 429, or a 5xx but 501), waiting
// controller.k8sclient.retry.base.backoff, doubled each time, at most 10 s.
// Keys not set leave cfg's values.
func (c ClientParams) RESTConfig(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	if c.QPS > 0 {
		out.QPS = c.QPS
		if out.Burst = c.Burst; out.Burst == 0 {
			out.Burst = int(2 * c.QPS)
		}
	} else if c.Burst > 0 {
		out.Burst = c.Burst
	}
	if c.DialTimeout > 0 || c.KeepAlive > 0 {
		d := &net.Dialer{Timeout: c.DialTimeout, KeepAlive: c.KeepAlive}
		if d.Timeout == 0 {
			d.Timeout = 30 * time.Second
		}
		out.Dial = d.DialContext
	}
	tune := c.TLSHandshakeTimeout > 0 || c.IdleConnTimeout > 0 || c.MaxIdleConns > 0
	if !tune && c.RetryMax == 0 {
		return out
	}
	prev := out.WrapTransport
	out.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if prev != nil {
			rt = prev(rt)
		}
		if t, ok := rt.(*http.Transport); ok && tune {
			t = t.Clone() // client-go shares its transports between clients
			if c.TLSHandshakeTimeout > 0 {
				t.TLSHandshakeTimeout = c.TLSHandshakeTimeout
			}
			if c.IdleConnTimeout > 0 {
				t.IdleConnTimeout = c.IdleConnTimeout
			}
			if c.MaxIdleConns > 0 {
				t.MaxIdleConns, t.MaxIdleConnsPerHost = c.MaxIdleConns, c.MaxIdleConns
			}
			rt = t
		}
		if c.RetryMax > 0 {
			base := c.RetryBaseBackoff
			if base <= 0 {
				base = 100 * time.Millisecond
			}
			rt = &retryTransport{next: rt, max: c.RetryMax, base: base}
		}
		return rt
	}
	return out
}

// retryTransport retries a request that failed transiently, as Argo CD's
// k8s client retries do.
type retryTransport struct {
	next http.RoundTripper
	max  int
	base time.Duration
}

// RoundTrip implements http.RoundTripper.
func (r *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := r.next.RoundTrip(req)
		if attempt >= r.max || !retriable(resp, err) || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		wait := min(retryWaitMax, r.base<<attempt)
		t := time.NewTimer(wait)
		select {
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		case <-t.C:
		}
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, gerr
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// retriable reports a failure worth another try: a network error (not the
// caller's cancellation), 429, or a 5xx but 501.
func retriable(resp *http.Response, err error) bool {
	if err != nil {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	return resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented)
}
