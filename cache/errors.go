package cache

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Reason says why a kind is not served from the cache.
type Reason string

// Reasons a kind is tainted.
const (
	// ReasonForbidden: the identity may not both list and watch the kind;
	// the kind is skipped and not retried until the next discovery.
	ReasonForbidden Reason = "Forbidden"
	// ReasonListFailed: the last list of the kind failed (a broken
	// conversion webhook, an unavailable aggregated API, a timeout). The
	// cache keeps retrying with backoff.
	ReasonListFailed Reason = "ListFailed"
	// ReasonWatchFailed: the watch of the kind could not be (re)started.
	// The objects cached so far are kept but may be stale; the cache keeps
	// retrying with backoff.
	ReasonWatchFailed Reason = "WatchFailed"
	// ReasonDiscoveryFailed: the API group could not be discovered, so its
	// kinds are unknown. Kind is empty in the reported GroupVersionKind.
	ReasonDiscoveryFailed Reason = "DiscoveryFailed"
)

// ErrNotSynced is returned by calls that need a synced cache before Start
// has returned.
var ErrNotSynced = errors.New("cache: not synced")

// KindError is the error recorded for a tainted kind.
type KindError struct {
	// GVK is the kind (its preferred version); Kind is empty when a whole
	// group version failed discovery.
	GVK schema.GroupVersionKind
	// Namespace is set when only the kind's watch in that namespace failed
	// (namespaced mode).
	Namespace string
	// Reason classifies the failure.
	Reason Reason
	// Err is the error the API server or the client returned.
	Err error
}

// Error names the kind, the namespace if any, the reason and the cause.
func (e *KindError) Error() string {
	what := e.GVK.GroupVersion().String()
	if e.GVK.Kind != "" {
		what += "/" + e.GVK.Kind
	}
	if e.Namespace != "" {
		what += " in namespace " + e.Namespace
	}
	return fmt.Sprintf("cache: %s: %s: %v", what, e.Reason, e.Err)
}

// Unwrap returns the underlying error.
func (e *KindError) Unwrap() error { return e.Err }
