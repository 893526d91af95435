package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/sync"
)

// windowRecheck is how often an automated sync blocked by a sync window is
// tried again.
const windowRecheck = 30 * time.Second

// decideAutoSync makes autosync.Decide's decision for a refresh of the
// app; busy reports that an automated sync of the app runs already, and no
// decision is made.
func (r *runner) decideAutoSync(st *appState, app *Application, status appstatus.Status) (d autosync.Decision, busy bool) {
	r.mu.Lock()
	if st.syncing {
		r.mu.Unlock()
		return autosync.Decision{}, true
	}
	var last *autosync.Record
	if st.auto != nil {
		l := *st.auto
		last = &l
	}
	r.mu.Unlock()
	return autosync.Decide(autosync.Input{Policy: app.Spec.SyncPolicy, Status: status, Sources: app.Spec.AllSources(), Last: last, Now: time.Now()}), false
}

// autoSync starts the automated sync decision d asks for, and returns a
// wait when the decision may change by time alone (a self-heal backoff).
// The sync runs on its own goroutine, not on the reconcile worker: a sync
// that waits for its rollout would otherwise hold a worker that other
// apps' refreshes need. While it runs, the app's refreshes go on and start
// no other sync; when it ends the app is queued again.
func (r *runner) autoSync(ctx context.Context, key string, st *appState, app *Application, status appstatus.Status, d autosync.Decision) time.Duration {
	if !d.Sync {
		if d.Wait > 0 && d.HealAttempt > 0 {
			r.announceHeal(st, app, status, d)
		} else if d.Reason != "" && status.Sync == appstatus.OutOfSync {
			r.e.opts.Log.V(1).Info("no automated sync", "app", app.Name, "revision", status.Revision, "reason", d.Reason)
		}
		return d.Wait
	}
	r.mu.Lock()
	if st.syncing {
		r.mu.Unlock()
		return 0
	}
	st.syncing = true
	r.mu.Unlock()
	r.syncs.Add(1)
	go func() {
		defer r.syncs.Done()
		again := r.runAutoSync(ctx, st, app, status, d.Next, d.HealAttempt)
		r.queue.AddAfter(key, again)
	}()
	return 0
}

// announceHeal logs and notifies (NotifySelfHealBackoff) a self-heal that
// waits for its backoff, once per self-heal: the app is OutOfSync and its
// last operation Succeeded, and this says what comes next and when.
func (r *runner) announceHeal(st *appState, app *Application, status appstatus.Status, d autosync.Decision) {
	key := fmt.Sprintf("%s#%d", status.Revision, d.HealAttempt)
	r.mu.Lock()
	noted := st.healNoted == key
	st.healNoted = key
	r.mu.Unlock()
	if noted {
		return
	}
	due := time.Now().Add(d.Wait)
	msg := fmt.Sprintf("self-heal attempt %d due at %s (in %s, self-heal backoff)", d.HealAttempt, due.Format(time.RFC3339), d.Wait.Round(time.Second))
	r.e.opts.Log.Info("self-heal waits for its backoff", "app", app.Name, "revision", status.Revision, "attempt", d.HealAttempt, "in", d.Wait.Round(time.Second).String())
	r.e.notify(appstatus.Notification{Type: appstatus.NotifySelfHealBackoff, Key: v1alpha1.KeyOf(app), Revision: status.Revision,
		Message: msg, SelfHealAttempt: d.HealAttempt})
}

// runAutoSync runs one automated sync decided with record next (heal, the
// self-heal attempt it is, 0 for a new revision), and returns when to look
// at the app again.
func (r *runner) runAutoSync(ctx context.Context, st *appState, app *Application, status appstatus.Status, next autosync.Record, heal int) time.Duration {
	p := app.Spec.SyncPolicy
	res, err := r.e.Sync(ctx, app, SyncRequest{Prune: p.Automated.Prune, latest: r.latestRevision(ctx, app), automated: true, selfHeal: heal})
	var blocked *SyncWindowError
	if errors.As(err, &blocked) {
		// Automated syncs wait for the window; the status says which one.
		r.mu.Lock()
		st.syncing = false
		st.status.Conditions = append(st.status.Conditions, appstatus.Condition{Type: appstatus.ConditionSyncWindowBlocked, Message: blocked.Error(), Err: blocked})
		r.mu.Unlock()
		return windowRecheck
	}
	rec := next
	rec.Failed = res.Phase != sync.Succeeded
	if rec.Failed {
		rec.Message = res.Message
		if err != nil {
			rec.Message = err.Error()
		}
	}
	r.mu.Lock()
	st.auto = &rec
	st.syncing = false
	r.mu.Unlock()
	if err != nil {
		r.e.opts.Log.Info("automated sync failed", "app", app.Name, "revision", status.Revision, "error", err.Error())
	}
	return time.Second // look again soon: the sync changed things
}

// latestRevision returns a function that resolves the app's revisions now,
// so that retries of an older revision can be pre-empted by a newer one.
func (r *runner) latestRevision(ctx context.Context, app *Application) func() string {
	return func() string {
		var revs []string
		for _, src := range app.Spec.AllSources() {
			r.e.Apps().Invalidate(src.RepoURL)
			rev, err := r.e.sources.Resolve(ctx, desired.ProjectName(app), src, src.TargetRevision)
			if err != nil {
				return ""
			}
			revs = append(revs, rev.Commit)
		}
		return desired.JoinRevisions(revs)
	}
}
