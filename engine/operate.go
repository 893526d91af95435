package engine

import (
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/autosync"
	"github.com/kubegitops/gitops/engine/internal/compare"
	"github.com/kubegitops/gitops/engine/internal/desired"
	"github.com/kubegitops/gitops/state"

	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/sync"
)

// SyncRequest asks for one sync operation of an application.
type SyncRequest struct {
	// Revisions pin the revision of each source (a commit, tag or branch),
	// in the order of the app's sources; empty uses each targetRevision.
	Revisions []string
	// Prune deletes objects of the app no longer in Git.
	Prune bool
	// DryRun plans and validates on the server and writes nothing.
	DryRun bool
	// Resources limits the sync to these objects.
	Resources []resource.Key
	// ConfirmPrune confirms Prune=confirm deletions.
	ConfirmPrune bool
	// SyncOptions are options for this operation alone, merged over the
	// app's syncOptions: the apply strategy (ServerSideApply=true|false,
	// Replace=true, Force=true), ApplyOutOfSyncOnly, PruneLast and the like.
	SyncOptions []string
	// Manual marks a sync a person asked for: sync windows with manualSync
	// let it through.
	Manual bool
	// Retry, when set, is this operation's retry policy in place of the
	// app's syncPolicy.retry (Argo CD's retryStrategy of a sync request);
	// nil retries by the app's. A resumed operation retries by the app's.
	Retry *RetryStrategy
	// State resumes an interrupted operation.
	State *sync.State
	// latest, when set, reports the newest desired revision so that
	// retries of an older one are pre-empted (the run loop sets it).
	latest func() string
	// automated marks the run loop's automated syncs in the record.
	automated bool
	// selfHeal, on an automated sync, is the number of the self-heal in a
	// row it is (autosync.Decision.HealAttempt); 0 for a new revision.
	selfHeal int
	// resumed marks Resume's continuation of an interrupted operation:
	// sync windows do not stop an operation that already began (as in
	// Argo CD), and no other interrupted operation is looked for.
	resumed bool
}

// Sync runs a sync operation of app: the project's limits, policies and
// sync windows are checked first, and the revisions it renders must pass
// the project's source integrity criteria (a *SourceIntegrityError
// otherwise, whose operation message is Argo CD's "ComparisonError:
// GIT/GPG: ..."); then sync.Syncer plans, dry-runs, applies
// and waits, wave by wave, retrying by the app's retry policy (with
// retry.refresh, each retry resolves and renders the sources again and
// syncs their latest revision, a pinned one dropped). A successful
// sync is recorded in the app's history; every operation that got past the
// sync windows is recorded as the app's last operation (LastOperation),
// failures before the first write included.
//
// While it runs, the operation is checkpointed in the state store (Options.State) (after
// each wave and before each hook create), and an operation a stopped
// process left unfinished is resumed first (Resume).
func (ops Ops) Sync(ctx context.Context, app *Application, req SyncRequest) (sync.Result, error) {
	e := ops.e

	if !req.resumed && req.State == nil {
		if _, resumed, err := e.Resume(ctx, app); resumed && err != nil {
			e.opts.Log.Info("the resumed sync did not succeed", "app", e.instanceOf(app), "error", err.Error())
		}
	}
	return e.sync(ctx, app, req, time.Now())
}

// sync runs one operation begun at started and records its outcome.
func (e *Engine) sync(ctx context.Context, app *Application, req SyncRequest, started time.Time) (sync.Result, error) {
	var revision string
	var deployed *desired.Desired
	var asked *state.OperationRequest
	res, err := e.syncOnce(ctx, app, req, started, &revision, &deployed, &asked)
	var blocked *SyncWindowError
	if !errors.As(err, &blocked) {
		op := operationStateOf(res, revision, started, req.automated, req.DryRun)
		op.SelfHealAttempt = req.selfHeal
		if res.Phase == sync.Running && asked != nil && len(res.PendingConfirmation) == 0 {
			// Interrupted (its context ended): kept resumable.
			st := res.State
			op.Request, op.Checkpoint = asked, &st
		}
		e.record(context.WithoutCancel(ctx), app, op, deployed)
		e.notifyRecordedStatus(app)
	}
	return res, err
}

// syncOnce is Sync without the final record: it reports the revision it
// rendered, what it was asked (for a resume), and, after a successful real
// sync, what it deployed.
func (e *Engine) syncOnce(ctx context.Context, app *Application, req SyncRequest, started time.Time, revision *string, deployed **desired.Desired, asked **state.OperationRequest) (sync.Result, error) {
	proj, err := e.project(app)
	if err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, err
	}
	if err := e.checkApplication(proj, app); err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, err
	}
	if !req.DryRun && !req.resumed {
		if err := windowCheck(proj, app, time.Now(), req.Manual); err != nil {
			return sync.Result{Phase: sync.Error, Message: err.Error()}, err
		}
	}
	cs, err := e.cluster(ctx, app.Spec.Destination)
	if err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, err
	}
	desired, err := e.render(ctx, app, cs, req.Revisions, false)
	if err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, err
	}
	if err := e.verifySources(ctx, app, proj, desired.Revisions, false); err != nil {
		// Argo CD's operation message: the error conditions that stop it.
		*revision = desired.Revision()
		return sync.Result{Phase: sync.Error, Message: string(appstatus.ConditionComparisonError) + ": " + err.Error()}, err
	}
	differ, err := e.differFor(app, cs)
	if err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, err
	}
	syncer, err := e.syncerFor(cs, proj, app)
	if err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, err
	}
	opts, err := compare.AppSyncOptions(app)
	if err == nil && len(req.SyncOptions) > 0 {
		var extra resource.Options
		extra, err = resource.ParseOptions(strings.Join(req.SyncOptions, ","))
		opts = opts.Merge(extra)
	}
	if err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, err
	}
	sreq := sync.Request{
		App: e.instanceOf(app), Revision: desired.Revision(), Desired: e.withoutChildApplications(desired.Objects),
		Namespace: app.Spec.Destination.Namespace, Options: opts,
		Prune: req.Prune, DryRun: req.DryRun, Resources: req.Resources, ConfirmPrune: req.ConfirmPrune,
		AllowEmpty: app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Automated != nil && app.Spec.SyncPolicy.Automated.AllowEmpty,
		Admit:      e.admission(proj, app),
		InSync:     sync.DifferInSync(differ),
		// Used only with RespectIgnoreDifferences=true (the app's or this
		// operation's sync options).
		KeepIgnored: differ.KeepIgnored,
		State:       req.State,
	}
	if p := app.Spec.SyncPolicy; p != nil && p.ManagedNamespaceMetadata != nil {
		sreq.NamespaceMetadata = &sync.NamespaceMetadata{Labels: p.ManagedNamespaceMetadata.Labels, Annotations: p.ManagedNamespaceMetadata.Annotations}
	}
	*revision = sreq.Revision
	if opts.Has(resource.OptionFailOnSharedResource, "true") && cs.Cache() != nil {
		if err := e.sharedResources(cs, app, sreq.Desired); err != nil {
			return sync.Result{Phase: sync.Failed, Message: err.Error()}, err
		}
	}
	e.notify(appstatus.Notification{Type: appstatus.NotifySyncStarted, Key: v1alpha1.KeyOf(app), Revision: sreq.Revision,
		Message: startedMessage(req, sreq.Revision), SelfHealAttempt: req.selfHeal})
	*asked = requestOf(req, desired)
	running := state.OperationState{Phase: sync.Running, Message: "syncing", Revision: sreq.Revision, Automated: req.automated, DryRun: req.DryRun,
		SelfHealAttempt: req.selfHeal, StartedAt: started, Request: *asked, Checkpoint: req.State}
	e.record(ctx, app, &running, nil)
	if *asked != nil {
		sreq.Checkpoint = e.checkpointer(ctx, app, running)
	}
	terminate, done := e.operationStarted(e.instanceOf(app))
	defer done()
	sreq.Terminate = terminate
	slot := &syncSlot{sem: e.syncSem, ctx: ctx}
	slot.acquire()
	sreq.Yield = slot.yield
	e.metrics.SyncStarted()
	retry := req.Retry
	if retry == nil && app.Spec.SyncPolicy != nil {
		retry = app.Spec.SyncPolicy.Retry
	}
	var refresh func(context.Context, sync.Request) (sync.Request, error)
	if retry != nil && retry.Refresh {
		refresh = func(ctx context.Context, prev sync.Request) (sync.Request, error) {
			next, rendered, err := e.refreshRetry(ctx, app, proj, cs, prev)
			if err != nil {
				return prev, err
			}
			desired, sreq.Revision, *revision, *asked = rendered, next.Revision, next.Revision, requestOf(req, rendered)
			running.Revision, running.Request, running.Checkpoint = next.Revision, *asked, nil
			e.record(ctx, app, &running, nil)
			if *asked != nil {
				next.Checkpoint = e.checkpointer(ctx, app, running)
			}
			return next, nil
		}
	}
	res, err := e.runSync(ctx, syncer, retry, sreq, req.latest, refresh)
	e.metrics.SyncDone(e.metricsApp(app), string(res.Phase))
	slot.release()
	if res.Phase == sync.Succeeded && !req.DryRun {
		*deployed = &desired
	}
	switch {
	case res.Phase == sync.Succeeded && !req.DryRun:
		e.notify(appstatus.Notification{Type: appstatus.NotifySyncSucceeded, Key: v1alpha1.KeyOf(app), Revision: sreq.Revision, Message: res.Message})
	case res.Phase == sync.Failed || res.Phase == sync.Error:
		e.notify(appstatus.Notification{Type: appstatus.NotifySyncFailed, Key: v1alpha1.KeyOf(app), Revision: sreq.Revision, Message: res.Message})
	}
	return res, err
}

// runSync runs the operation, with the retry policy retry when there is
// one (the request's, else the app's); with retry.Refresh each retry
// syncs what refresh returns.
func (e *Engine) runSync(ctx context.Context, s Syncer, retry *RetryStrategy, req sync.Request, latest func() string, refresh func(context.Context, sync.Request) (sync.Request, error)) (sync.Result, error) {
	if retry == nil || req.DryRun {
		return s.Sync(ctx, req)
	}
	policy := sync.DefaultRetryPolicy(int(retry.Limit))
	if b := retry.Backoff; b != nil {
		if d, err := ParseBackoffDuration(b.Duration); err == nil && d > 0 {
			policy.Backoff = d
		}
		if d, err := ParseBackoffDuration(b.MaxDuration); err == nil && d > 0 {
			policy.MaxBackoff = d
		}
		if b.Factor != nil {
			policy.Factor = float64(*b.Factor)
		}
	}
	if refresh != nil {
		return sync.RetryRefreshing(ctx, s, req, policy, refresh)
	}
	return sync.Retry(ctx, s, req, policy, latest)
}

// refreshRetry prepares a retry under Argo CD's retry.refresh: the app's
// sources are resolved again at their targetRevisions (their cached refs
// dropped, and the operation's pinned revisions too, as Argo CD drops
// them), rendered, and checked against the project's source integrity as
// the first attempt was. It returns prev with the new objects and
// revision, and what was rendered.
func (e *Engine) refreshRetry(ctx context.Context, app *Application, proj *Project, cs *clusterState, prev sync.Request) (sync.Request, desired.Desired, error) {
	for _, src := range app.Spec.AllSources() {
		e.Apps().Invalidate(src.RepoURL)
	}
	d, err := e.render(ctx, app, cs, nil, false)
	if err != nil {
		return prev, desired.Desired{}, err
	}
	if err := e.verifySources(ctx, app, proj, d.Revisions, false); err != nil {
		return prev, desired.Desired{}, err
	}
	e.opts.Log.Info("retrying the sync with the latest revisions", "app", e.instanceOf(app), "from", prev.Revision, "revision", d.Revision())
	prev.Revision = d.Revision()
	prev.Desired = e.withoutChildApplications(d.Objects)
	return prev, d, nil
}

// record saves a finished operation, and a successful one (not a dry-run)
// in the app's history. A store that fails is logged: the sync itself
// happened and is reported to the caller either way.
func (e *Engine) record(ctx context.Context, app *Application, op *state.OperationState, r *desired.Desired) {
	e.stateMu.Lock()
	defer e.stateMu.Unlock()
	st, err := e.opts.State.Load(ctx, e.instanceOf(app))
	if err != nil {
		e.opts.Log.Error(err, "cannot record the operation", "app", app.Name)
		return
	}
	st.Operation = op
	if r != nil {
		st.History = withHistoryEntry(st.History, r.Revisions, app.Spec.RevisionHistoryLimit)
		st.DeletionHooks = hasDeletionHooks(r.Objects)
	}
	if err := e.opts.State.Save(ctx, e.instanceOf(app), st); err != nil {
		e.opts.Log.Error(err, "cannot record the operation", "app", app.Name)
	}
}

// withHistoryEntry appends a deployment of revs to h, unless it re-syncs
// the revisions of the newest entry, keeping at most limit entries
// (default 10, as Argo CD).
func withHistoryEntry(h []appstatus.HistoryEntry, revisions []source.Revision, limit *int64) []appstatus.HistoryEntry {
	revs := make([]string, len(revisions))
	for i, rev := range revisions {
		revs[i] = rev.Commit
	}
	if n := len(h); n > 0 && strings.Join(h[n-1].Revisions, ",") == strings.Join(revs, ",") {
		return h // a resync of the same revisions is not a new deployment
	}
	var id int64 = 1
	if n := len(h); n > 0 {
		id = h[n-1].ID + 1
	}
	h = append(h, appstatus.HistoryEntry{ID: id, Revisions: revs, DeployedAt: time.Now()})
	max := 10
	if limit != nil {
		max = int(*limit)
	}
	if len(h) > max {
		h = h[len(h)-max:]
	}
	return h
}

// History returns the recorded syncs of the app of key, oldest first, from
// the engine's state store (Options.State).
func (ops Ops) History(ctx context.Context, key v1alpha1.AppKey) ([]appstatus.HistoryEntry, error) {
	e := ops.e

	st, err := e.opts.State.Load(ctx, e.instanceName(key))
	return st.History, err
}

// LastOperation returns the last sync operation of the app of key, as the
// engine's state store (Options.State) kept it; nil when there was none.
func (ops Ops) LastOperation(ctx context.Context, key v1alpha1.AppKey) (*state.OperationState, error) {
	e := ops.e

	st, err := e.opts.State.Load(ctx, e.instanceName(key))
	return st.Operation, err
}

// Rollback syncs the revisions of history entry id. As in Argo CD, an app
// with automated sync cannot be rolled back (the next automated sync would
// undo it).
func (ops Ops) Rollback(ctx context.Context, app *Application, id int64, prune bool) (sync.Result, error) {
	e := ops.e

	if p := app.Spec.SyncPolicy; p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled) {
		err := fmt.Errorf("rollback of %s: automated sync is enabled", app.Name)
		return sync.Result{Phase: sync.Error, Message: err.Error()}, err
	}
	history, err := e.History(ctx, v1alpha1.KeyOf(app))
	if err != nil {
		return sync.Result{Phase: sync.Error, Message: err.Error()}, fmt.Errorf("rollback of %s: %w", app.Name, err)
	}
	for _, h := range history {
		if h.ID == id {
			return e.Sync(ctx, app, SyncRequest{Revisions: h.Revisions, Prune: prune, Manual: true})
		}
	}
	err = fmt.Errorf("rollback of %s: no history entry %d", app.Name, id)
	return sync.Result{Phase: sync.Error, Message: err.Error()}, err
}

// syncSlot is an operation's hold on one of the Options.SyncWorkers slots.
// The operation holds it while it plans and writes, and gives it up while
// it only waits for health (sync.Request.Yield), so that a few rollouts
// waiting for their Pods do not stall every other app's sync.
type syncSlot struct {
	sem  chan struct{}
	ctx  context.Context
	held bool
}

// acquire takes a slot, or gives up when the operation's context ends
// (the operation then finds its context done and stops).
func (s *syncSlot) acquire() {
	if s.held {
		return
	}
	select {
	case s.sem <- struct{}{}:
		s.held = true
	case <-s.ctx.Done():
	}
}

// release gives the slot back, if held.
func (s *syncSlot) release() {
	if s.held {
		<-s.sem
		s.held = false
	}
}

// yield is sync.Request.Yield: release now, acquire again to resume.
func (s *syncSlot) yield() func() {
	s.release()
	return s.acquire
}

// startedMessage is the SyncStarted message of an operation syncing
// revision: autosync.StartedMessage for an automated sync, empty for a
// person's.
func startedMessage(req SyncRequest, revision string) string {
	if !req.automated {
		return ""
	}
	return autosync.StartedMessage(revision, req.selfHeal)
}
