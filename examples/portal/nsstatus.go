package main

import (
	"github.com/kubegitops/gitops/state"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/hooks"
	"github.com/kubegitops/gitops/resource"
	"github.com/kubegitops/gitops/sync"
)

// These read an Application's status, as the operator writes it in Argo
// CD's shape, back into the engine's vocabulary the pages are made of.
// The operator's status carries no diffs (diffStatus compares the app for
// them).

// statusOfObject is a's status; false while nothing has reconciled it.
func statusOfObject(a *gitops.Application) (appstatus.Status, bool) {
	st := a.Status
	if st.ReconciledAt == nil && st.Sync.Status == "" && st.Health.Status == "" {
		return appstatus.Status{}, false
	}
	out := appstatus.Status{Sync: appstatus.SyncStatusCode(st.Sync.Status), Health: health.Status{Code: health.Code(st.Health.Status),
		Message: st.Health.Message}, Revision: revisionOf(st.Sync.Revision, st.Sync.Revisions)}
	if out.Sync == "" {
		out.Sync = appstatus.Unknown
	}
	if out.Health.Code == "" {
		out.Health.Code = health.Unknown
	}
	if st.ReconciledAt != nil {
		out.ReconciledAt = st.ReconciledAt.Time
	}
	for _, rs := range st.Resources {
		row := appstatus.ResourceRow{Key: resource.Key{Group: rs.Group, Kind: rs.Kind, Namespace: rs.Namespace, Name: rs.Name},
			Status: appstatus.SyncStatusCode(rs.Status), Hook: rs.Hook, RequiresPruning: rs.RequiresPruning}
		if rs.Health != nil && rs.Health.Status != "" {
			row.Health = &health.Status{Code: health.Code(rs.Health.Status), Message: rs.Health.Message}
		}
		out.Resources = append(out.Resources, row)
	}
	for _, c := range st.Conditions {
		out.Conditions = append(out.Conditions, appstatus.Condition{Type: appstatus.ConditionType(c.Type), Message: c.Message})
	}
	return out, true
}

// revisionOf is the engine's revision (commas between sources).
func revisionOf(rev string, revs []string) string {
	if len(revs) > 0 {
		return strings.Join(revs, ",")
	}
	return rev
}

// historyOfObject is a's status.history, oldest first.
func historyOfObject(a *gitops.Application) []appstatus.HistoryEntry {
	out := make([]appstatus.HistoryEntry, 0, len(a.Status.History))
	for _, h := range a.Status.History {
		revs := h.Revisions
		if len(revs) == 0 {
			revs = []string{h.Revision}
		}
		out = append(out, appstatus.HistoryEntry{ID: h.ID, Revisions: revs, DeployedAt: h.DeployedAt.Time})
	}
	return out
}

// operationOfObject is a's status.operationState, or nil.
func operationOfObject(a *gitops.Application) *state.OperationState {
	op := a.Status.OperationState
	if op == nil {
		return nil
	}
	out := &state.OperationState{Phase: sync.OperationPhase(op.Phase), Message: op.Message, StartedAt: op.StartedAt.Time,
		Automated: op.Operation.InitiatedBy.Automated}
	if op.FinishedAt != nil {
		out.FinishedAt = op.FinishedAt.Time
	}
	if s := op.Operation.Sync; s != nil {
		out.DryRun = s.DryRun
	}
	if r := op.SyncResult; r != nil {
		out.Revision = revisionOf(r.Revision, r.Revisions)
		for _, rr := range r.Resources {
			out.Results = append(out.Results, resultOfObject(rr))
		}
	}
	return out
}

// resultOfObject is one object's outcome in Argo CD's shape as the
// progress table shows it.
func resultOfObject(rr v1alpha1.ResourceResult) sync.ResourceResult {
	out := sync.ResourceResult{Key: resource.Key{Group: rr.Group, Kind: rr.Kind, Namespace: rr.Namespace, Name: rr.Name},
		Phase: hooks.Phase(rr.SyncPhase), Hook: rr.HookType != "", Message: rr.Message, Status: sync.TaskSucceeded}
	switch rr.Status {
	case "SyncFailed":
		out.Status = sync.TaskFailed
	case "Pruned":
		out.Action = sync.Pruned
	case "PruneSkipped":
		out.Action, out.Status = sync.Skipped, sync.TaskSkipped
	}
	if out.Hook {
		switch rr.HookPhase {
		case string(sync.Running):
			out.Status = sync.TaskRunning
		case string(sync.Failed), string(sync.Error):
			out.Status = sync.TaskFailed
		}
	}
	return out
}
