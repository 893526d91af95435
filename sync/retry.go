package sync

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// RetryPolicy is Argo CD's retry strategy for failed syncs.
type RetryPolicy struct {
	// Limit is the number of retries after the first attempt; 0 means no
	// retry and a negative value retries until the context ends.
	Limit int
	// Backoff is the wait before the first retry. Default 5 s.
	Backoff time.Duration
	// Factor multiplies the wait after each retry. Default 2.
	Factor float64
	// MaxBackoff caps the wait. Default 3 minutes.
	MaxBackoff time.Duration
}

// DefaultRetryPolicy returns Argo CD's defaults: 5 s doubling up to 3
// minutes, with the given limit.
func DefaultRetryPolicy(limit int) RetryPolicy {
	return RetryPolicy{Limit: limit, Backoff: 5 * time.Second, Factor: 2, MaxBackoff: 3 * time.Minute}
}

// delay returns the wait before retry n (0-based): step n+1 of the
// policy as a wait.Backoff, the defaults filled in.
func (p RetryPolicy) delay(n int) time.Duration {
	d := p.Backoff
	if d <= 0 {
		d = 5 * time.Second
	}
	f := p.Factor
	if f < 1 {
		f = 2
	}
	maxD := p.MaxBackoff
	if maxD <= 0 {
		maxD = 3 * time.Minute
	}
	b := wait.Backoff{Duration: min(d, maxD), Factor: f, Cap: maxD, Steps: math.MaxInt32}
	d = b.Step()
	for range n {
		d = b.Step()
	}
	return d
}

// PreemptedError reports that retries stopped because a newer revision is
// desired; the host should sync that revision instead.
type PreemptedError struct {
	// Revision is the revision the retries synced, and Newer the desired one
	// that preempted them.
	Revision, Newer string
}

// Error implements error.
func (e *PreemptedError) Error() string {
	return fmt.Sprintf("sync: retries of revision %s pre-empted by revision %s", e.Revision, e.Newer)
}

// RetrySync runs Sync and, while it fails, retries it by policy. Before each
// retry it asks latest (when set) for the newest desired revision; when that
// differs from the request's, it stops with a *PreemptedError so the host
// can sync the new revision at once rather than keep retrying the old one.
// A Running result (interrupted or awaiting confirmation) is returned as it
// is, as is an Error phase (bad input does not get better by retrying).
func (s *Syncer) RetrySync(ctx context.Context, req Request, policy RetryPolicy, latest func() string) (Result, error) {
	return Retry(ctx, s, req, policy, latest)
}

// Retry is RetrySync for any syncer (a host's own included).
func Retry(ctx context.Context, s interface {
	Sync(context.Context, Request) (Result, error)
}, req Request, policy RetryPolicy, latest func() string) (Result, error) {
	return retryLoop(ctx, s, req, policy, latest, nil)
}

// RetryRefreshing is Retry for Argo CD's retry.refresh: before each retry
// next returns the request to sync instead of req (the latest revision of
// the app's sources, rendered again), so no retry is pre-empted by a newer
// revision. An error of next ends the retries with an Error result that
// carries it.
func RetryRefreshing(ctx context.Context, s interface {
	Sync(context.Context, Request) (Result, error)
}, req Request, policy RetryPolicy, next func(context.Context, Request) (Request, error)) (Result, error) {
	return retryLoop(ctx, s, req, policy, nil, next)
}

// retryLoop is Retry and RetryRefreshing: latest pre-empts, next refreshes.
func retryLoop(ctx context.Context, s interface {
	Sync(context.Context, Request) (Result, error)
}, req Request, policy RetryPolicy, latest func() string, next func(context.Context, Request) (Request, error)) (Result, error) {
	for attempt := 0; ; attempt++ {
		res, err := s.Sync(ctx, req)
		if res.Phase != Failed || errors.Is(err, ErrTerminated) {
			return res, err
		}
		if policy.Limit >= 0 && attempt >= policy.Limit {
			return res, err
		}
		wait := time.NewTimer(policy.delay(attempt))
		select {
		case <-ctx.Done():
			wait.Stop()
			return res, err
		case <-wait.C:
		}
		if latest != nil {
			if newer := latest(); newer != "" && newer != req.Revision {
				return res, &PreemptedError{Revision: req.Revision, Newer: newer}
			}
		}
		req.State = nil // a retry is a new operation: dry-run again, hooks again
		if next != nil {
			fresh, nerr := next(ctx, req)
			if nerr != nil {
				return Result{Phase: Error, Message: nerr.Error()}, nerr
			}
			req = fresh
			req.State = nil
		}
	}
}
