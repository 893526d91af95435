package chartserver

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a forward HTTP proxy on loopback (absolute-URI requests to
// http:// targets, CONNECT tunnels to https:// ones), counting what it
// forwards (a tunnel counts once).
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
		if r.Method == http.MethodConnect {
			p.tunnel(w, r)
			return
		}
		if !r.URL.IsAbs() {
			http.Error(w, "only absolute-URI requests and CONNECT", http.StatusBadRequest)
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

// tunnel serves CONNECT: it dials the target and copies bytes both ways.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	target, err := net.DialTimeout("tcp", r.Host, 10*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		target.Close()
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	p.forwards.Add(1)
	w.WriteHeader(http.StatusOK)
	client, buf, err := hj.Hijack()
	if err != nil {
		target.Close()
		return
	}
	go func() {
		defer target.Close()
		defer client.Close()
		done := make(chan struct{})
		go func() { _, _ = io.Copy(target, buf); close(done) }()
		_, _ = io.Copy(client, target)
		<-done
	}()
}
