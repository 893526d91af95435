package scm

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// RateLimitError is a forge's refusal for a rate limit that does not
// lift within Options.MaxRateLimitWait (or after Options.MaxRetries
// waits). The set keeps its last good Applications and is generated again
// on its next interval.
type RateLimitError struct {
	// Host is the forge's host.
	Host string
	// Status is the answer's HTTP status (429, or 403 with a rate limit).
	Status int
	// RetryAfter is how long the forge asked to wait (0: unknown).
	RetryAfter time.Duration
}

// Error implements error.
func (e *RateLimitError) Error() string {
	s := fmt.Sprintf("%s: rate limited (HTTP %d)", e.Host, e.Status)
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(", retry after %s", e.RetryAfter.Round(time.Second))
	}
	return s
}

// RateLimits is an http.RoundTripper that waits out a forge's rate
// limit: an answer 429, or 403 with Retry-After or a spent quota
// (X-RateLimit-Remaining: 0, GitHub's and Gitea's; RateLimit-Remaining:
// 0, GitLab's), is retried after Retry-After (seconds or an HTTP date)
// or the reset time (X-RateLimit-Reset / RateLimit-Reset, Unix seconds)
// when that is at most MaxWait, at most MaxRetries times; otherwise the
// request fails with a *RateLimitError. The wait ends with the request's
// context.
type RateLimits struct {
	// Base sends the requests. Required.
	Base http.RoundTripper
	// MaxWait is the longest wait retried.
	MaxWait time.Duration
	// MaxRetries is the most retries of one request.
	MaxRetries int
	// now is time.Now (tests of reset times).
	now func() time.Time
}

// RoundTrip implements http.RoundTripper.
func (t *RateLimits) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := t.Base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		wait, limited := t.limit(resp)
		if !limited {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		rle := &RateLimitError{Host: req.URL.Host, Status: resp.StatusCode, RetryAfter: wait}
		if wait > t.MaxWait || attempt >= t.MaxRetries {
			return nil, rle
		}
		if req.Body != nil && req.GetBody == nil {
			return nil, rle // the body cannot be sent again
		}
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
		timer := time.NewTimer(wait)
		select {
		case <-req.Context().Done():
			timer.Stop()
			return nil, req.Context().Err()
		case <-timer.C:
		}
	}
}

// limit reports whether resp is a rate limit, and how long to wait.
func (t *RateLimits) limit(resp *http.Response) (time.Duration, bool) {
	h := resp.Header
	retryAfter, hasRetryAfter := parseRetryAfter(h.Get("Retry-After"), t.clock())
	spent := h.Get("X-RateLimit-Remaining") == "0" || h.Get("RateLimit-Remaining") == "0"
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
	case resp.StatusCode == http.StatusForbidden && (hasRetryAfter || spent):
	default:
		return 0, false
	}
	if hasRetryAfter {
		return retryAfter, true
	}
	for _, k := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		if v := h.Get(k); v != "" {
			if sec, err := strconv.ParseInt(v, 10, 64); err == nil {
				if d := time.Unix(sec, 0).Sub(t.clock()); d > 0 {
					return d, true
				}
				return 0, true
			}
		}
	}
	return 0, true
}

func (t *RateLimits) clock() time.Time {
	if t.now != nil {
		return t.now()
	}
	return time.Now()
}

// parseRetryAfter reads a Retry-After value: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := at.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}
