package notify

import (
	"fmt"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
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
// Argo CD's shape and evaluates the triggers. The app is
// ControllerOptions.ApplicationOf's of the notification's Key (apps are
// told apart by namespace and name); its status is StatusOf's
// (Engine.Apps().AppStatus) when it has one, else what the notifications said; status.operationState follows the sync
// notifications: SyncStarted is phase Running, SyncSucceeded Succeeded and
// SyncFailed Failed, with syncResult.revision the synced revision and
// startedAt/finishedAt the notifications' times.
func (c *Controller) Notify(n appstatus.Notification) {
	c.enqueue(observation{note: &n})
}

// fromEngine applies a notification to the app's status and returns the
// Application map. It runs on Run's goroutine only.
func (c *Controller) fromEngine(n appstatus.Notification) (map[string]any, error) {
	app, ok, err := c.engineApplication(n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("application %s is not known", nameOf(n))
	}
	ea := c.engine[nameOf(n)]
	if ea == nil {
		ea = &engineApp{}
		c.engine[nameOf(n)] = ea
	}
	at := n.Time
	if at.IsZero() {
		at = time.Now()
	}
	sources := len(app.Spec.AllSources())
	if st, ok := c.engineStatus(n); ok {
		ea.status = appstatus.Refreshed(ea.status, st, sources, at)
	}
	st := &ea.status
	when := metav1.NewTime(at.Truncate(time.Second))
	switch n.Type {
	case appstatus.NotifyHealthChanged:
		st.Health = appstatus.WithHealth(st.Health, string(n.Health), n.Message, at)
	case appstatus.NotifyOutOfSync:
		st.Sync.Status = string(appstatus.OutOfSync)
		st.Sync.Revision, st.Sync.Revisions = appstatus.SplitRevision(n.Revision, sources)
	case appstatus.NotifySyncStatusChanged:
		st.Sync.Status = string(n.Sync)
		st.Sync.Revision, st.Sync.Revisions = appstatus.SplitRevision(n.Revision, sources)
	case appstatus.NotifySyncStarted:
		op := appstatus.Operation{Sync: &appstatus.SyncOperation{}}
		op.Sync.Revision, op.Sync.Revisions = appstatus.SplitRevision(n.Revision, sources)
		st.OperationState = &appstatus.OperationState{Operation: op, Phase: string(sync.Running), Message: "syncing", StartedAt: when,
			SyncResult: &appstatus.SyncOperationResult{Revision: op.Sync.Revision, Revisions: op.Sync.Revisions}}
	case appstatus.NotifySyncSucceeded, appstatus.NotifySyncFailed:
		prev := st.OperationState
		next := appstatus.OperationState{Phase: string(sync.Succeeded), Message: n.Message, StartedAt: when, FinishedAt: &when}
		if prev != nil && prev.Phase == string(sync.Running) {
			next.Operation, next.StartedAt = prev.Operation, prev.StartedAt
		}
		if n.Type == appstatus.NotifySyncFailed {
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
	if err == nil && n.Type == appstatus.NotifyDeleted {
		if meta, ok := obj["metadata"].(map[string]any); ok {
			meta["deletionTimestamp"] = when.UTC().Format(time.RFC3339)
		}
	}
	return obj, err
}

// nameOf names a notification's app: its key ("namespace/name", or the
// bare name for a key without a namespace).
func nameOf(n appstatus.Notification) string {
	return n.Key.String()
}

// engineApplication is the Application a notification is about: by its
// key with ControllerOptions.ApplicationOf, else by its name with
// Application.
func (c *Controller) engineApplication(n appstatus.Notification) (*v1alpha1.Application, bool, error) {
	switch {
	case c.opts.ApplicationOf != nil && n.Key != (v1alpha1.AppKey{}):
		app, ok := c.opts.ApplicationOf(n.Key)
		return app, ok, nil
	case c.opts.Application != nil:
		app, ok := c.opts.Application(n.Key.Name)
		return app, ok, nil
	}
	return nil, false, fmt.Errorf("ControllerOptions.ApplicationOf is not set")
}

// engineStatus is the app's last status, by its key with
// ControllerOptions.StatusOf, else by its name with Status.
func (c *Controller) engineStatus(n appstatus.Notification) (appstatus.Status, bool) {
	switch {
	case c.opts.StatusOf != nil && n.Key != (v1alpha1.AppKey{}):
		return c.opts.StatusOf(n.Key)
	case c.opts.Status != nil:
		return c.opts.Status(n.Key.Name)
	}
	return appstatus.Status{}, false
}
