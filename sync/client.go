package sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/pager"

	"k8s.io/apimachinery/pkg/util/wait"
)

func (s *Syncer) resourceFor(gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	var rc dynamic.ResourceInterface = s.dyn.Resource(gvr)
	if ns != "" {
		rc = s.dyn.Resource(gvr).Namespace(ns)
	}
	if s.with.Writes != nil {
		rc = limitedResource{ResourceInterface: rc, l: s.with.Writes}
	}
	return rc
}

// list reads every object of one resource in one namespace ("" = all or
// cluster-scoped), 500 per page.
func (s *Syncer) list(ctx context.Context, gvr schema.GroupVersionResource, ns string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return s.resourceFor(gvr, ns).List(ctx, opts)
	})
	p.PageSize = 500
	err := retryTransient(ctx, func() error {
		out = out[:0]
		return p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				out = append(out, u)
			}
			return nil
		})
	})
	return out, err
}

// isTransient reports errors worth retrying within a step: the API server
// restarting, overloaded or timing out. Everything else is the object's
// fault and is reported.
func isTransient(err error) bool {
	if err == nil {
		return false
	}
	if apierrors.IsInternalError(err) && isSchemaError(err) {
		// Server-side apply reports a manifest its schema cannot hold
		// (an unknown field, a wrong type) as a 500: retrying cannot help.
		return false
	}
	if apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) {
		return true
	}
	if utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) {
		return true
	}
	// A request written to a connection the API server closed as it died
	// fails with a broken pipe, which none of the above recognise.
	if errors.Is(err, syscall.EPIPE) {
		return true
	}
	// client-go wraps a body cut short as the server died ("unexpected
	// error when reading response body. Please retry.") with %w, which
	// IsProbableEOF's equality test does not see through.
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	// A connection client-go closed under the request as the server went
	// away: HTTP/2's own errors for it are unexported, so they are known by
	// their text; a closed network connection likewise.
	if errors.Is(err, net.ErrClosed) || isConnectionClosed(err.Error()) {
		return true
	}
	var netErr interface{ Timeout() bool }
	return errors.As(err, &netErr) && netErr.Timeout()
}

// isConnectionClosed recognises HTTP/2's errors for a connection that was
// closed or lost under a request.
func isConnectionClosed(msg string) bool {
	return strings.Contains(msg, "http2: client connection force closed") ||
		strings.Contains(msg, "http2: client connection lost") ||
		strings.Contains(msg, "http2: server sent GOAWAY and closed the connection")
}

// isSchemaError recognises the API server's 500 answers that are about the
// object, not the server: server-side apply could not build the typed
// object ("failed to create typed patch object", "field not declared in
// schema", a value of the wrong type).
func isSchemaError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "failed to create typed patch object") ||
		strings.Contains(msg, "field not declared in schema") ||
		strings.Contains(msg, "failed to create typed live object")
}

// retryTransient runs fn until it succeeds, fails for a reason that is not
// transient, or ctx ends, backing off from 200 ms to 5 s.
func retryTransient(ctx context.Context, fn func() error) error {
	b := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Cap: 5 * time.Second, Steps: math.MaxInt32}
	for {
		err := fn()
		if !isTransient(err) {
			return err
		}
		t := time.NewTimer(b.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}
