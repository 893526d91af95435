package sync

import (
	"errors"
	"fmt"
	"io"
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

// A response body cut short as the API server dies comes back from
// client-go wrapped ("unexpected error when reading response body. Please
// retry."): the write is retried, not failed (seen as a failure of
// internal/faults.TestAPIServerKilledDuringSync).
func TestTruncatedResponseBodyIsTransient(t *testing.T) {
	err := fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", io.ErrUnexpectedEOF)
	if !isTransient(err) {
		t.Errorf("%v is not transient", err)
	}
	if isTransient(errors.New("admission webhook denied the request")) {
		t.Error("an object's own error is transient")
	}
}
