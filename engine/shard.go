package engine

import (
	"context"
	gosync "sync"
)

// followSharder runs the Sharder (when it has a Run method) and reshards
// whenever it reports a change, until ctx ends.
func (r *runner) followSharder(ctx context.Context, wg *gosync.WaitGroup) {
	sh := r.e.opts.Sharder
	if runnable, ok := sh.(interface{ Run(context.Context) error }); ok {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = runnable.Run(ctx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.reshard()
		for {
			select {
			case <-ctx.Done():
				return
			case <-sh.Changes():
				r.reshard()
			}
		}
	}()
}

// reshard asks the Sharder which top-level apps are this replica's: apps
// gained are queued at once; apps lost stop being reconciled here (a
// refresh in flight finishes) and their status is forgotten, since it is
// their new owner's to report.
func (r *runner) reshard() {
	r.mu.Lock()
	var top []string
	for name, st := range r.apps {
		if st.parent == "" {
			top = append(top, name)
		}
	}
	r.mu.Unlock()
	owned := r.e.opts.Sharder.Owned(top)
	r.mu.Lock()
	var gained []string
	for name := range owned {
		if !r.owned[name] {
			gained = append(gained, name)
		}
	}
	r.owned = owned
	for name, st := range r.apps {
		if !r.ownsLocked(name) {
			st.hasState, st.hasGood = false, false
		}
	}
	r.mu.Unlock()
	if len(gained) > 0 {
		r.e.opts.Log.Info("apps gained by sharding", "count", len(gained))
	}
	for _, name := range gained {
		r.queue.Add(name)
	}
}

// owns reports whether this replica reconciles the app.
func (r *runner) owns(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ownsLocked(name)
}

// ownsLocked is owns with r.mu held: without a Sharder every app is owned;
// with one, an app is owned when its top-level ancestor is (a child app
// follows the parent that renders it).
func (r *runner) ownsLocked(name string) bool {
	if r.owned == nil {
		return true
	}
	for depth := 0; depth < 64; depth++ {
		st, ok := r.apps[name]
		if !ok {
			return false
		}
		if st.parent == "" {
			return r.owned[name]
		}
		name = st.parent
	}
	return false // a parent chain this long is a cycle
}
