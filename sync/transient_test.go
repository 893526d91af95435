package sync

import (
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

// A write to a connection the dying API server closed fails with a broken
// pipe; it is transient like a reset or a refused connection (seen as a
// flake of TestAPIServerRestartMidSync).
func TestBrokenPipeIsTransient(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EPIPE, syscall.ECONNRESET, syscall.ECONNREFUSED} {
		err := &url.Error{Op: "Patch", URL: "https://127.0.0.1/api", Err: &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", errno)}}
		if !isTransient(err) {
			t.Errorf("%v is not transient", err)
		}
	}
}
