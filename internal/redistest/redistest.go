package redistest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Server is a real redis-server that a test can kill, start again on the
// same port, freeze and thaw.
type Server struct {
	// Addr is its host:port on loopback.
	Addr string
	t    testing.TB
	bin  string
	dir  string
	mu   gosync.Mutex
	cmd  *exec.Cmd
}

// Start runs redis-server without persistence on a free loopback port,
// waits until it answers PING, and stops it when the test ends. The test
// fails at once when redis-server is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not installed (apt-get install -y redis-server): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &Server{Addr: addr, t: t, bin: bin, dir: t.TempDir()}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Restart starts the server again on its port after Stop (or starts it
// the first time) and waits until it answers PING.
func (s *Server) Restart() {
	s.t.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	cmd := exec.Command(s.bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return c.Ping(pctx).Err() == nil, nil
	})
	if err != nil {
		s.t.Fatalf("redis-server did not answer on %s: %v", s.Addr, err)
	}
}

// Stop kills the server, as a crash would: connections are refused after.
// Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a frozen server must be able to die
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Freeze stops the server's process (SIGSTOP): the kernel still accepts
// connections on its port, but nothing is ever answered, as with a server
// stuck in a long command or swapped out.
func (s *Server) Freeze() { s.signal(syscall.SIGSTOP) }

// Thaw lets a frozen server run again.
func (s *Server) Thaw() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatal("redis-server is not running")
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatal(fmt.Errorf("signal %v: %w", sig, err))
	}
}
