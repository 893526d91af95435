package git

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubegitops/gitops/source"
)

// silentListener accepts connections and never writes or reads a byte.
func silentListener(t *testing.T) (addr string, closeAll func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	closeAll = func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}
	t.Cleanup(closeAll)
	return ln.Addr().String(), closeAll
}

// TestServerThatNeverAnswersTimesOut: over HTTP and SSH, resolve and
// fetch give ErrTimeout within the configured timeout, and leave no
// goroutine behind.
func TestServerThatNeverAnswersTimesOut(t *testing.T) {
	addr, closeAll := silentListener(t)
	before := runtime.NumGoroutine()
	s := newSource(t, func(o *Options) { o.Timeout = 300 * time.Millisecond })
	key := newSSHKey(t)
	repos := []source.Repository{
		{URL: "http://" + addr + "/r.git"},
		{URL: "ssh://git@" + addr + "/r.git", Credentials: &source.Credentials{SSHPrivateKey: key.private, InsecureIgnoreHostKey: true}},
	}
	for _, repo := range repos {
		start := time.Now()
		_, err := s.Resolve(context.Background(), repo, "main")
		if !errors.Is(err, source.ErrTimeout) {
			t.Errorf("%s: resolve error = %v, want ErrTimeout", repo, err)
		}
		_, err = s.Snapshot(context.Background(), repo, source.Revision{Commit: strings.Repeat("1", 40)})
		if !errors.Is(err, source.ErrTimeout) {
			t.Errorf("%s: snapshot error = %v, want ErrTimeout", repo, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v with a 300ms timeout", repo, d)
		}
	}
	// The caller's own context is honoured too, below the timeout.
	s2 := newSource(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s2.Resolve(ctx, repos[0], "main"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("resolve with a 200ms context: error = %v, want context.DeadlineExceeded", err)
	}
	// s2's shared ls-remote outlives its caller until its own 90s timeout
	// (other callers may still want it); closing the server's connections
	// ends it now.
	closeAll()
	s.Close()
	s2.Close()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return runtime.NumGoroutine() <= before+2, nil
	}); err != nil {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}
