package chartserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Proxy is a forward HTTP proxy on loopback (absolute-URI requests to
// http:// targets; no CONNECT), counting what it forwards.
type Proxy struct {
	// URL is the proxy's URL.
	URL      string
	forwards atomic.Int64
}

// NewProxy starts a proxy; it stops with the test.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	p := &Proxy{}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() || r.Method == http.MethodConnect {
			http.Error(w, "only absolute-URI http requests", http.StatusBadRequest)
			return
		}
		p.forwards.Add(1)
		out, err := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out.Header = r.Header.Clone()
		out.ContentLength = r.ContentLength
		out.Header.Del("Proxy-Connection")
		resp, err := client.Do(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Forwards returns how many requests the proxy forwarded.
func (p *Proxy) Forwards() int64 { return p.forwards.Load() }
