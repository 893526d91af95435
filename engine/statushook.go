package engine

import (
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
)

func statusSet(e *Engine) *statusSubscribers { return &e.statuses }

// OnStatus registers notify to be called with an app's status each time
// the engine has one: after every refresh Run records (changed or not: a
// new revision of an app that stays OutOfSync, a tree that moved, a
// failure), after each Refresh and HardRefresh a host calls, and after
// each Sync (and Rollback) with the status Run last recorded for the app
// (its operation and history changed; none when Run does not manage the
// app). Notify, by contrast, reports only changes of sync and health. A
// UI that shows an app subscribes to redraw it without polling AppStatus.
//
// notify runs on the goroutine that refreshed or synced, under no lock of
// the engine's (it may call the engine), but it delays that goroutine: it
// must not block (signal a buffered channel, coalesce). The returned stop
// unsubscribes; calling it again does nothing. Subscriptions do not need
// Run.
func (apps Apps) OnStatus(notify func(key v1alpha1.AppKey, st appstatus.Status)) (stop func()) {
	e := apps.e

	return subscribe(e, statusSet, notify)
}

// notifyStatus calls the OnStatus subscribers with app's status, outside
// e.mu.
func (e *Engine) notifyStatus(app *Application, st appstatus.Status) {
	fns := subscribed(e, statusSet)
	if len(fns) == 0 {
		return
	}
	key := v1alpha1.KeyOf(app)
	for _, fn := range fns {
		fn(key, st)
	}
}

// notifyRecordedStatus calls the OnStatus subscribers with the status Run
// last recorded for app, if any (after a sync: its operation changed).
func (e *Engine) notifyRecordedStatus(app *Application) {
	if st, ok := e.Apps().AppStatus(v1alpha1.KeyOf(app)); ok {
		e.notifyStatus(app, st)
	}
}

func (e *Engine) notify(n appstatus.Notification) {
	if e.opts.Notify == nil {
		return
	}
	if n.Time.IsZero() {
		n.Time = time.Now()
	}
	e.opts.Notify(n)
}
