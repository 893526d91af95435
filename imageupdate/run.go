package imageupdate

import (
	"context"
	"time"
)

// Run updates apps every interval until ctx ends: each round calls
// Update for every app apps returns (the current set, so a host can add and
// remove apps) and hands each outcome to report. The registry cache of u
// makes a round cost one scan per image and interval however many apps
// share the image. Run returns ctx's error when ctx ends; a failing app
// does not stop the loop (its error goes to report).
func Run(ctx context.Context, u *Updater, interval time.Duration, apps func() []App, report func(Result, error)) error {
	if interval <= 0 {
		interval = u.registry.Interval()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for _, app := range apps() {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res, err := u.Update(ctx, app)
			if report != nil {
				report(res, err)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
