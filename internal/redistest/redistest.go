package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	gosync "sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Server is a running redis-server.
type Server struct {
	// Addr is its host:port on loopback.
	Addr string
	cmd  *exec.Cmd
	once gosync.Once
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
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd}
	t.Cleanup(s.Stop)
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	err = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Ping(ctx).Err() == nil, nil
	})
	if err != nil {
		t.Fatalf("redis-server did not answer on %s: %v", s.Addr, err)
	}
	return s
}

// Stop kills the server, as a crash would; later calls do nothing.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
}
