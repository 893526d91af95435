package notify

import (
	"fmt"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/sync"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// engineApp is what Notify knows of one app: its Argo CD status, built
// from the engine's status and the operation its notifications described.
type engineApp struct {
	status appstatus.ApplicationStatus
}

// Notify is an engine's Options.Notify: it queues the notification (never
// blocking the engine) for Run, which turns it into the Application of
// Argo CD's shape and evaluates the triggers. The status is
// ControllerOptions.Status's (Engine.AppStatus) when it has one, else what
// the notifications said; status.operationState follows the sync
// notifications: SyncStarted is phase Running, SyncSucceeded Succeeded and
// SyncFailed Failed, with syncResult.revision the synced revision and
// startedAt/finishedAt the notifications' times.
func (c *Controller) Notify(n gitops.Notification) {
	c.enqueue(observation{note: &n})
}

// fromEngine applies a notification to the app's status and returns the
// Application map. It runs on Run's goroutine only.
func (c *Controller) fromEngine(n gitops.Notification) (map[string]any, error) {
	if c.opts.Application == nil {
		return nil, fmt.Errorf("ControllerOptions.Application is not set")
	}
	app, ok := c.opts.Application(n.App)
	if !ok {
		return nil, fmt.Errorf("application %s is not known", n.App)
	}
	ea := c.engine[n.App]
	if ea == nil {
		ea = &engineApp{}
		c.engine[n.App] = ea
	}
	at := n.Time
	if at.IsZero() {
		at = time.Now()
	}
	sources := len(app.Spec.AllSources())
	if c.opts.Status != nil {
		if st, ok := c.opts.Status(n.App); ok {
			ea.status = appstatus.Refreshed(ea.status, st, sources, at)
		}
	}
	st := &ea.status
	when := metav1.NewTime(at.Truncate(time.Second))
	switch n.Type {
	case gitops.NotifyHealthChanged:
		st.Health = appstatus.WithHealth(st.Health, string(n.Health), n.Message, at)
	case gitops.NotifyOutOfSync:
		st.Sync.Status = string(gitops.OutOfSync)
		st.Sync.Revision, st.Sync.Revisions = appstatus.SplitRevision(n.Revision, sources)
	case gitops.NotifySyncStatusChanged:
		st.Sync.Status = string(n.Sync)
		st.Sync.Revision, st.Sync.Revisions = appstatus.SplitRevision(n.Revision, sources)
	case gitops.NotifySyncStarted:
		op := appstatus.Operation{Sync: &appstatus.SyncOperation{}}
		op.Sync.Revision, op.Sync.Revisions = appstatus.SplitRevision(n.Revision, sources)
		st.OperationState = &appstatus.OperationState{Operation: op, Phase: string(sync.Running), Message: "syncing", StartedAt: when,
			SyncResult: &appstatus.SyncOperationResult{Revision: op.Sync.Revision, Revisions: op.Sync.Revisions}}
	case gitops.NotifySyncSucceeded, gitops.NotifySyncFailed:
		prev := st.OperationState
		next := appstatus.OperationState{Phase: string(sync.Succeeded), Message: n.Message, StartedAt: when, FinishedAt: &when}
		if prev != nil && prev.Phase == string(sync.Running) {
			next.Operation, next.StartedAt = prev.Operation, prev.StartedAt
		}
		if n.Type == gitops.NotifySyncFailed {
			next.Phase = string(sync.Failed)
		}
		next.SyncResult = &appstatus.SyncOperationResult{}
		next.SyncResult.Revision, next.SyncResult.Revisions = appstatus.SplitRevision(n.Revision, sources)
		st.OperationState = &next
	}
	if st.Health.Status == "" {
		st.Health = appstatus.WithHealth(st.Health, string(health.Unknown), "", at)
	}
	obj, err := appstatus.Object(app, *st)
	if err == nil && n.Type == gitops.NotifyDeleted {
		if meta, ok := obj["metadata"].(map[string]any); ok {
			meta["deletionTimestamp"] = when.UTC().Format(time.RFC3339)
		}
	}
	return obj, err
}
