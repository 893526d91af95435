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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// A manifest the schema cannot hold is answered by server-side apply with
// a 500 ("failed to create typed patch object ... field not declared in
// schema"): it is the object's error, not a transient one (a sync of such
// a manifest retried until its timeout; TestValidateFalse found it).
func TestSchemaErrorIsNotTransient(t *testing.T) {
	err := apierrors.NewInternalError(errors.New("failed to create typed patch object (ns/loose; /v1, Kind=ConfigMap): .notAField: field not declared in schema"))
	if isTransient(err) {
		t.Errorf("%v is transient", err)
	}
	if !isTransient(apierrors.NewInternalError(errors.New("etcdserver: leader changed"))) {
		t.Error("an internal error of the server is not transient")
	}
}

// A request on an HTTP/2 connection client-go force-closed as the API
// server died is transient (seen in a cold run of
// internal/faults.TestAPIServerKilledDuringSync).
func TestClosedHTTP2ConnectionIsTransient(t *testing.T) {
	for _, msg := range []string{
		"http2: client connection force closed via ClientConn.Close",
		"http2: client connection lost",
	} {
		err := &url.Error{Op: "Patch", URL: "https://127.0.0.1/api", Err: errors.New(msg)}
		if !isTransient(err) {
			t.Errorf("%v is not transient", err)
		}
	}
	if !isTransient(fmt.Errorf("write: %w", net.ErrClosed)) {
		t.Error("a closed network connection is not transient")
	}
}
