package faults

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisProc is a real redis-server that a test can kill, start again on
// the same port, freeze and thaw. internal/redistest starts one but cannot
// restart it on its port, which "Redis comes back" needs.
type redisProc struct {
	t    *testing.T
	bin  string
	dir  string
	Addr string
	cmd  *exec.Cmd
}

// startRedis runs redis-server on a free loopback port until the test ends.
func startRedis(t *testing.T) *redisProc {
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
	r := &redisProc{t: t, bin: bin, dir: t.TempDir(), Addr: addr}
	r.start()
	t.Cleanup(r.kill)
	return r
}

// start runs the server and waits until it answers PING.
func (r *redisProc) start() {
	r.t.Helper()
	_, port, _ := net.SplitHostPort(r.Addr)
	r.cmd = exec.Command(r.bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.dir,
		"--logfile", filepath.Join(r.dir, "redis.log"))
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1})
	defer c.Close()
	if err := waitUntil(10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return c.Ping(ctx).Err() == nil
	}); err != nil {
		r.t.Fatalf("redis-server did not answer on %s: %v", r.Addr, err)
	}
}

// kill ends the server as a crash would: connections are refused after.
func (r *redisProc) kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGCONT) // a frozen server must be able to die
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// freeze stops the server's process (SIGSTOP): the kernel still accepts
// connections on its port, but nothing is ever answered, as with a server
// stuck in a long command or swapped out.
func (r *redisProc) freeze() { r.signal(syscall.SIGSTOP) }

// thaw lets a frozen server run again.
func (r *redisProc) thaw() { r.signal(syscall.SIGCONT) }

func (r *redisProc) signal(sig syscall.Signal) {
	r.t.Helper()
	if r.cmd == nil {
		r.t.Fatal("redis-server is not running")
	}
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatal(fmt.Errorf("signal %v: %w", sig, err))
	}
}
