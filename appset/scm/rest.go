package scm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/kubegitops/gitops/appset"
)

// maxBody bounds a forge's answer.
const maxBody = 32 << 20

// HTTPError is a forge's answer that is not a success; a 404 wraps
// appset.ErrRepositoryNotFound. It names the URL without its query and
// never holds a credential.
type HTTPError struct {
	// Status is the HTTP status.
	Status int
	// URL is the request's URL, without its query.
	URL string
	// Message is the start of the forge's answer.
	Message string
}

// Error implements error.
func (e *HTTPError) Error() string {
	s := fmt.Sprintf("GET %s: HTTP %d", e.URL, e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap makes a 404 appset.ErrRepositoryNotFound.
func (e *HTTPError) Unwrap() error {
	if e.Status == http.StatusNotFound {
		return appset.ErrRepositoryNotFound
	}
	return nil
}

// NotFound reports whether err is a forge's 404.
func NotFound(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && he.Status == http.StatusNotFound
}

// GetJSON GETs u with auth applied to the request and decodes a 2xx JSON
// answer into v (nil: the body is dropped). It returns the answer's
// headers (paging tokens).
func GetJSON(ctx context.Context, hc *http.Client, u string, auth func(*http.Request), v any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if auth != nil {
		auth(req)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("GET %s: answer over %d bytes", redact(u), maxBody)
	}
	if resp.StatusCode/100 != 2 {
		msg := string(body)
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		return resp.Header, &HTTPError{Status: resp.StatusCode, URL: redact(u), Message: msg}
	}
	if v == nil {
		return resp.Header, nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return resp.Header, fmt.Errorf("GET %s: %w", redact(u), err)
	}
	return resp.Header, nil
}

// redact drops a URL's query and user information.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	p.User, p.RawQuery = nil, ""
	return p.String()
}
