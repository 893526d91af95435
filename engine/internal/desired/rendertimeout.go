package desired

import (
	"context"
	"errors"
)

// renderTimeout bounds ctx by Config.RenderTimeout, when set; done turns
// an error of a render that ran past it into Config.TimeoutError's error
// naming app (a cancelled parent context is returned as it is).
func (b *Builder) renderTimeout(ctx context.Context, app string) (context.Context, func(error) error) {
	timeout := b.cfg.RenderTimeout
	if timeout <= 0 {
		return ctx, func(err error) error { return err }
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	return rctx, func(err error) error {
		defer cancel()
		if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			return b.cfg.TimeoutError(app, timeout, err)
		}
		return err
	}
}
