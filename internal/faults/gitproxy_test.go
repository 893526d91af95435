package faults

import (
	"io"
	"net"
	gosync "sync"
	"testing"
)

// hangingProxy forwards TCP connections to a backend until hang is called;
// from then on it drops the connections it was forwarding and accepts new
// ones without ever reading or answering: a server that is up but hung (a
// stuck process, a black-holing load balancer). A real Git server cannot be
// made to hang on demand, hence this one fake.
type hangingProxy struct {
	ln      net.Listener
	backend string

	mu      gosync.Mutex
	hung    bool
	forward []net.Conn // both ends of forwarded connections
	held    []net.Conn // connections accepted while hung
}

func startHangingProxy(t *testing.T, backend string) *hangingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &hangingProxy{ln: ln, backend: backend}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port.
func (p *hangingProxy) Addr() string { return p.ln.Addr().String() }

func (p *hangingProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		// Dial first, then decide under the lock hang takes: a connection
		// accepted just before hang is either forwarded (and closed by
		// hang) or held, never forwarded past it.
		b, err := net.Dial("tcp", p.backend)
		p.mu.Lock()
		if p.hung {
			p.held = append(p.held, c)
			p.mu.Unlock()
			if err == nil {
				b.Close()
			}
			continue
		}
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.forward = append(p.forward, c, b)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(b, c); b.Close() }()
		go func() { _, _ = io.Copy(c, b); c.Close() }()
	}
}

// hang makes the proxy hang from now on.
func (p *hangingProxy) hang() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hung = true
	for _, c := range p.forward {
		c.Close()
	}
	p.forward = nil
}

func (p *hangingProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range append(p.forward, p.held...) {
		c.Close()
	}
}
