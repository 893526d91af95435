package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RenderTimeoutError reports a render of one source of an app that ran
// past Options.RenderTimeout (Argo CD's
// controller.repo.server.timeout.seconds). It wraps
// context.DeadlineExceeded.
type RenderTimeoutError struct {
	// App is the application's name.
	App string
	// Timeout is Options.RenderTimeout.
	Timeout time.Duration
	// Err is the renderer's error.
	Err error
}

// Error names the app and the timeout.
func (e *RenderTimeoutError) Error() string {
	return fmt.Sprintf("application %s: render exceeded the render timeout of %s: %v", e.App, e.Timeout, e.Err)
}

// Unwrap returns the renderer's error and context.DeadlineExceeded.
func (e *RenderTimeoutError) Unwrap() []error { return []error{e.Err, context.DeadlineExceeded} }

// renderTimeout bounds ctx by Options.RenderTimeout, when set; done turns
// an error of a render that ran past it into a *RenderTimeoutError naming
// app (a cancelled parent context is returned as it is).
func (e *Engine) renderTimeout(ctx context.Context, app string) (context.Context, func(error) error) {
	if e.opts.RenderTimeout <= 0 {
		return ctx, func(err error) error { return err }
	}
	rctx, cancel := context.WithTimeout(ctx, e.opts.RenderTimeout)
	return rctx, func(err error) error {
		defer cancel()
		if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			return &RenderTimeoutError{App: app, Timeout: e.opts.RenderTimeout, Err: err}
		}
		return err
	}
}
